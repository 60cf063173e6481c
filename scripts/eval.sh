#!/usr/bin/env bash
# The main job (README): install the flashseek package (builds the kernels and the extension against this
# machine's torch) and run the evaluator on the default grid. Arguments go to flashseek-eval, e.g. --quick.
# Writes results.json, report.md and plots under bench/results/run-<UTC time>/ unless --out is given.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps . 2>&1 \
  | grep -v "WARNING: Running pip as" || true
out=bench/results/run-$(date -u +%Y%m%dT%H%M%SZ)
case " $* " in *" --out "*) exec flashseek-eval "$@" ;; esac
exec flashseek-eval --out "$out" "$@"
