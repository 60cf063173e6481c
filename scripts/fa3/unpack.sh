#!/usr/bin/env bash
# Unpack the FA3 carry (vLLM 0.26.0's _vllm_fa3_C, Hopper sm_90a, torch 2.11.0 / CUDA 13) to /tmp/fa3 and print
# the PYTHONPATH entry to use:  bash .fa3/unpack.sh && export PYTHONPATH=/tmp/fa3:$PYTHONPATH
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${FA3_DEST:-/tmp/fa3}"
so="$dest/vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so"
if [ ! -s "$so" ] || [ "$here/fa3.tar.xz" -nt "$so" ]; then
  rm -rf "$dest" && mkdir -p "$dest"
  tar -C "$dest" -xJf "$here/fa3.tar.xz"
  touch "$so"
fi
echo "fa3 carry unpacked in $dest; use: export PYTHONPATH=$dest:\$PYTHONPATH" >&2
echo "$dest"
