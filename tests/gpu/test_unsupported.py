"""Calls the library rejects today must raise its 'not supported yet' error (never run and return garbage):
MLA decode (d 64/512 with q_v), context parallel. When one of these becomes supported, this test fails on purpose:
take the case out of UNSUPPORTED in grid.py and let the grid check it. (fp8 is supported: test_fp8.py.)"""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import UNSUPPORTED_CP, UNSUPPORTED_MLA_DECODE, custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek  # noqa: E402

CASES = [
    make_scenario("mla", "MLAd16", "8q1s700", suffix=["p64"], page_size=64, q_v=True,
                  unsupported_reason=UNSUPPORTED_MLA_DECODE),
    make_scenario("mla", "MLAd128", "4q8s300", suffix=["p128"], page_size=128, q_v=True,
                  unsupported_reason=UNSUPPORTED_MLA_DECODE),
    make_scenario("mla", custom_heads(16, 2, 128), "8q1s900", suffix=["p16", "cp4"], cp_world_size=4, cp_rank=1,
                  unsupported_reason=UNSUPPORTED_CP),
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
