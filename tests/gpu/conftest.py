"""GPU tests of the flashseek kernels. Every module skips with flashseek.unavailable_reason() where the kernels
cannot run (no GPU, no compiled extension), so `pytest tests/gpu` reports skips with the reason, not errors.

Random cases draw from one seed, printed in the header: FLASHSEEK_TEST_SEED=<seed> replays a run exactly.
FLASHSEEK_TEST_RANDOM_PER_FAMILY sets how many random cases each family gets (default 4).
"""

import os
import random
import sys
from pathlib import Path

_PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
if str(_PYTHON_DIR) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(_PYTHON_DIR))

# chosen once per session, before the test modules (which read it at collection time) are imported
os.environ.setdefault("FLASHSEEK_TEST_SEED", str(random.SystemRandom().randrange(1, 1 << 30)))


def pytest_report_header(config):
    import flashseek

    reason = flashseek.unavailable_reason()
    seed = os.environ["FLASHSEEK_TEST_SEED"]
    state = "kernels available" if reason is None else f"kernels UNAVAILABLE ({reason}): GPU tests will skip"
    return [f"flashseek GPU tests: seed {seed} (replay: FLASHSEEK_TEST_SEED={seed}); {state}"]


def pytest_configure(config):
    # pytest-xdist registers it where installed; without it the mark must still be known (test_tma_producer)
    config.addinivalue_line("markers", "xdist_group(name): tests that share one pytest-xdist worker")


import pytest  # noqa: E402

# Above this a test's cached allocations go back to the driver: under tests-par six workers and their child processes
# (each test_fp8_under_experiment child runs the whole fp8 module) share one GPU, and each kept up to 29 GiB
# cached, so a 1 GiB allocation elsewhere ran out of memory.
_CACHED_BYTES_KEPT = 4 << 30


@pytest.fixture(autouse=True)
def _release_cached_gpu_memory():
    yield
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized() and torch.cuda.memory_reserved() > _CACHED_BYTES_KEPT:
        torch.cuda.empty_cache()
