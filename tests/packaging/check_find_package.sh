#!/usr/bin/env bash
# Packaging test: install the built library into a scratch prefix, then configure, build and run a consumer
# project that uses find_package(flashseek) and links flashseek::flashseek.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
cmake -S "$src_dir" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
out=$("$scratch/build/consumer")
echo "$out"
[ "$out" = "q: expected a tensor, got None" ]
