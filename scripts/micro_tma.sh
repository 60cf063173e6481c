#!/usr/bin/env bash
# Builds and runs the TMA streaming micro-benchmark (bench/micro/tma_stream.cu): per-CTA and total GB/s of a paged
# KV cache streamed into shared memory, against box size, stages, issuing lanes and CTAs. About a minute at most.
#   BUILD: build folder (default build); OUT: where micro_tma.txt goes (default gpu-out).
#   Arguments go to the program: --keys N (per CTA, 4096), --compute-ns N (consumer spin per block, 0), --reps N (11),
#   --heads-only (only the multi-head boxes: all KV heads of an NHD page in one box).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-out}
mkdir -p "$BUILD" "$OUT"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/micro/tma_stream.cu -o "$BUILD/tma_stream"
"$BUILD/tma_stream" "$@" | tee "$OUT/micro_tma.txt"
