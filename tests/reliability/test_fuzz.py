"""Fuzzing: FLASHSEEK_FUZZ_CASES (500) random calls over every argument the library supports
(scripts/reliability/fuzz_space.py says what varies), each checked against the fp32 reference with every rule
of flashseek.testing.tolerance (FA3's relative rule, vLLM's absolute rule, the LSE rule, finite outputs, out
written in place and nowhere past its rows, the kvcache append, the cascade against one plain call).

The seed is printed in the header (FLASHSEEK_FUZZ_SEED, random per session unless set); case i uses seed + i,
which is also its test id. A failure prints the line that replays it alone:
    FLASHSEEK_FUZZ_SEED=<case seed> FLASHSEEK_FUZZ_CASES=1 python3 -m pytest tests/reliability/test_fuzz.py
"""

import os

import pytest

import flashseek

_REASON = flashseek.unavailable_reason()
if _REASON is not None:
    pytest.skip(f"flashseek kernels unavailable: {_REASON}", allow_module_level=True)

from fuzz_space import DEFAULT_CASES, fuzz_case  # noqa: E402
from reliability_cases import DEVICE, is_cuda_error, run_fuzz_case  # noqa: E402
from reliability_report import record  # noqa: E402

SEED = int(os.environ.get("FLASHSEEK_FUZZ_SEED", "1"))
CASES = int(os.environ.get("FLASHSEEK_FUZZ_CASES", str(DEFAULT_CASES)))
record("fuzz", kind="session", seed=SEED, cases=CASES)
_lost = []


@pytest.mark.parametrize("case_seed", range(SEED, SEED + CASES))
def test_fuzz_case(case_seed):
    if _lost:
        pytest.fail(f"not run: the CUDA context was lost in case {_lost[0]}")
    case = fuzz_case(case_seed)
    res = run_fuzz_case(case, DEVICE)
    if res.error and is_cuda_error(res.error):
        _lost.append(case_seed)
    record("fuzz", kind="case", case_seed=case_seed, name=case.scenario.name, ok=res.correct,
           reason=None if res.correct else res.reason[:600], replay=case.replay, features=list(case.features))
    assert res.correct, (f"{case.scenario.name}: {res.summary()}\n  replay: {case.replay} python3 -m pytest "
                         f"tests/reliability/test_fuzz.py\n  scenario: {case.scenario}")
