#!/usr/bin/env bash
# Records the commit (and whether the tree differs from it) for the evaluator on the GPU machine: .git-sha.
cd "$(dirname "$0")/.."
dirty=0
[ -n "$(git status --porcelain)" ] && dirty=1
echo "$(git rev-parse HEAD) $dirty" > .git-sha
cat .git-sha
