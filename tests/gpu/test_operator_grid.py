"""grid.md section 2, the operator test grid (mirrors vLLM's own operator tests): 54 cases, each on fresh random
inputs against the fp32 reference; its 8 fp8 cases (e4m3 q/k/v, descales of ones, d 40/72/80/128/256) under the
fp8 rules (FA3's 4x max / 3x mean of naive_fp8, vLLM's 0.15 / 0.15 against the unquantized values)."""

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import operator_grid  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

CASES = operator_grid()
assert len(CASES) == 54 and sum(s.dtype == "e4m3" for s in CASES) == 8, len(CASES)


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_operator_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)
