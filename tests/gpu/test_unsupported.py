"""Calls the library rejects today must raise its 'not supported yet' error (never run and return garbage):
fp8 (e4m3 q/k/v with descales). When one of these becomes supported, this test fails on purpose: take the case
out of UNSUPPORTED in grid.py and let the grid check it. (MLA decode and context parallel are supported: see
test_mla_decode.py.)"""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import UNSUPPORTED_FP8, make_scenario, operator_grid  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek  # noqa: E402

FP8_OPERATOR = [s for s in operator_grid() if s.dtype == "e4m3"]
CASES = FP8_OPERATOR + [
    make_scenario("fp8", "L8", "q300s1k_8q1s500", suffix=["p16", "stride0"], dtype="e4m3", descale="stride0",
                  unsupported_reason=UNSUPPORTED_FP8),
    make_scenario("fp8", "OSSt8", "8q1s500", suffix=["p16", "hnd", "random"], dtype="e4m3", descale="random",
                  hnd=True, unsupported_reason=UNSUPPORTED_FP8),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_rejected_with_not_supported(scenario):
    inputs = make_inputs(scenario, "cuda", seed=session_seed())
    with pytest.raises(Exception) as info:
        call_flashseek(scenario, inputs)
    message = str(info.value)
    assert "not supported" in message.lower(), (
        f"{scenario.name}: expected the library's 'not supported yet' error for {scenario.unsupported_reason!r}, "
        f"got {type(info.value).__name__}: {message}")
