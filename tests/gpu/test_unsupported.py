"""Calls the library rejects today must raise its 'not supported yet' error (never run and return garbage):
MLA decode with a soft cap, sinks or fp8 (the MLA kernel lacks them). When one of these becomes supported, this
test fails on purpose: let the grid check it instead. (fp8: test_fp8.py; MLA decode and context parallel:
test_mla_decode.py.)"""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import UNSUPPORTED_MLA_DECODE, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek  # noqa: E402

CASES = [
    make_scenario("mla", "MLAd16", "8q1s700", suffix=["p64", "sc50"], page_size=64, q_v=True, softcap=50.0,
                  unsupported_reason=UNSUPPORTED_MLA_DECODE),
    make_scenario("mla", "MLAd16", "8q1s700", suffix=["p64", "sinks"], page_size=64, q_v=True, sinks=True,
                  unsupported_reason=UNSUPPORTED_MLA_DECODE),
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
