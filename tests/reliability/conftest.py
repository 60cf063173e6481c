"""The reliability suite (issue 4). Every GPU module skips with flashseek.unavailable_reason() where the kernels
cannot run; test_cpu_parts.py runs anywhere (its torch parts skip without torch).

Seeds, printed in the header: FLASHSEEK_FUZZ_SEED (the fuzzer; case i of a run uses seed + i) and
FLASHSEEK_RELIABILITY_SEED (everything else). Set either to replay a run. scripts/reliability/run_all.py runs
each module in its own process and collects the metrics the tests record (FLASHSEEK_RELIABILITY_METRICS).
"""

import os
import random
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
for _p in (_ROOT / "python", _ROOT / "scripts" / "reliability"):
    if str(_p) not in sys.path:  # run from a checkout without installing
        sys.path.insert(0, str(_p))

# chosen once per session, before the test modules (which read them at collection time) are imported
os.environ.setdefault("FLASHSEEK_FUZZ_SEED", str(random.SystemRandom().randrange(1, 1 << 30)))
os.environ.setdefault("FLASHSEEK_RELIABILITY_SEED", str(random.SystemRandom().randrange(1, 1 << 30)))


def pytest_report_header(config):
    import flashseek

    reason = flashseek.unavailable_reason()
    state = "kernels available" if reason is None else f"kernels UNAVAILABLE ({reason}): GPU tests will skip"
    fuzz, seed = os.environ["FLASHSEEK_FUZZ_SEED"], os.environ["FLASHSEEK_RELIABILITY_SEED"]
    return [f"flashseek reliability: FLASHSEEK_FUZZ_SEED={fuzz} FLASHSEEK_RELIABILITY_SEED={seed}; {state}"]
