#!/usr/bin/env bash
# Makes .fa3/ (ignored by git): FA3 as a baseline for flashseek-eval on a machine without network.
# From the PyPI wheel vllm==0.26.0 (pins torch==2.11.0, built against CUDA 13) it keeps only
# vllm/vllm_flash_attn/{__init__.py, flash_attn_interface.py, _vllm_fa3_C.abi3.so} (FA3 for sm_90a), adds the
# stand-ins in scripts/fa3/shim/ (vllm/__init__.py, vllm/platforms/__init__.py) and packs them with xz
# (~7.5 MiB; the .so is 146 MiB raw). Carry .fa3 with a GPU call; scripts/gpu-run.sh and the evaluator put it on
# the path (.fa3/unpack.sh unpacks to /tmp/fa3). Needs pip and ~350 MB of free space in $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=0.26.0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 -d "$WORK" "vllm==$VERSION"
wheel=$(ls "$WORK"/vllm-*.whl)
mkdir -p "$WORK/pkg"
python3 - "$wheel" "$WORK/pkg" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith("vllm/vllm_flash_attn/") and name.count("/") == 2:
            z.extract(name, sys.argv[2])
PY
keep="$WORK/keep"
mkdir -p "$keep/vllm/vllm_flash_attn" "$keep/vllm/platforms"
for f in __init__.py flash_attn_interface.py _vllm_fa3_C.abi3.so; do
  cp "$WORK/pkg/vllm/vllm_flash_attn/$f" "$keep/vllm/vllm_flash_attn/"
done
cp scripts/fa3/shim/vllm/__init__.py "$keep/vllm/"
cp scripts/fa3/shim/vllm/platforms/__init__.py "$keep/vllm/platforms/"
{ echo "Extracted from $(basename "$wheel")"; echo "wheel sha256: $(sha256sum "$wheel" | cut -d' ' -f1)";
  (cd "$keep" && sha256sum vllm/vllm_flash_attn/*); } >"$keep/SOURCE.txt"
mkdir -p .fa3
tar -C "$keep" -cJf .fa3/fa3.tar.xz .
cp scripts/fa3/unpack.sh .fa3/unpack.sh
grep -qx '/.fa3/' .git/info/exclude 2>/dev/null || echo '/.fa3/' >> .git/info/exclude
ls -la .fa3
