#!/usr/bin/env bash
# The test command (README; .ci/run calls exactly this). Builds the C++ library, every kernel and the C++ tests,
# runs ctest (CPU tests; GPU primitive tests skip without a GPU; the SASS check that every forward kernel uses
# wgmma), then the Python tests (CPU tests everywhere; GPU tests skip with the reason where kernels cannot run).
# The Python extension is built when torch is importable.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FLASHSEEK_BUILD_DIR:-build/test}
JOBS=${JOBS:-$(nproc)}

python3 -m pip install -q --disable-pip-version-check numpy pytest matplotlib \
  "nvidia-cuda-cuobjdump==13.2.86" "nvidia-cuda-nvdisasm==13.2.86" 2>&1 | grep -v "WARNING: Running pip as" || true

WITH_PYTHON=OFF
if python3 -c "import torch" >/dev/null 2>&1; then WITH_PYTHON=ON; fi
cmake -S . -B "$BUILD" -G Ninja -DFLASHSEEK_BUILD_TESTS=ON -DFLASHSEEK_BUILD_PYTHON=$WITH_PYTHON \
      -DPython3_EXECUTABLE="$(command -v python3)"
ninja -C "$BUILD" -j "$JOBS"
if [ "$WITH_PYTHON" = ON ]; then cp "$BUILD"/_C*.so python/flashseek/; fi

(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
PYTHONPATH=$PWD/python python3 -m pytest tests/python tests/reliability tests/gpu -q -rs -p no:cacheprovider
