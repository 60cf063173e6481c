"""grid.md section 2, the operator test grid (mirrors vLLM's own operator tests), less its 8 fp8 cases, which
test_unsupported.py covers: 46 cases, each on fresh random inputs against the fp32 reference."""

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import operator_grid  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

CASES = [s for s in operator_grid() if s.dtype != "e4m3"]
assert len(CASES) == 46, len(CASES)


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_operator_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)
