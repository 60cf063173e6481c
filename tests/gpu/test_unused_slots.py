"""Garbage in KV slots that no sequence uses (the tail of a partly filled page, unused pages, the gap after a
batched row, the slots before a left pad) must change nothing: the same inputs with those slots holding NaN, +Inf,
-Inf or zeros give bitwise equal, finite outputs. (FA3 lets such NaN leak; flashseek must not.)"""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek  # noqa: E402

_lse = dict(return_lse=True, out_given=False)
CASES = [
    make_scenario("edge", "L8", "q100s1000_16q1s77_q1s1", suffix=["p16"], **_lse),
    make_scenario("edge", "L8", "32q1s1000", suffix=["p128"], page_size=128, **_lse),
    make_scenario("edge", "L8", "q100s1000_16q1s77", suffix=["p256"], page_size=256, **_lse),
    make_scenario("edge", custom_heads(8, 2, 72), "q257s1k_4q1s600", suffix=["p48"], page_size=48, **_lse),
    make_scenario("edge", "L8", "64q1s333", suffix=["p16", "hnd"], hnd=True, **_lse),
    make_scenario("edge", "L70t8", "4q1s16k_q1s17", suffix=["p16", "splits8"], num_splits=8, **_lse),
    make_scenario("edge", "OSSt8", "q100s1000_16q1s77", suffix=["p16", "sinks-w128"], sinks=True, window=(127, 0),
                  **_lse),
    make_scenario("edge", "L8", "q257_q1k_q63", suffix=["gaps"], kv_layout="batched", kv_gap=61, **_lse),
    make_scenario("kvcache", "L8", "4q1s700", suffix=["leftpad"], entry="kvcache", kv_layout="batched",
                  leftpad=True, **_lse),
    make_scenario("kvcache", "L8", "4q2s700", suffix=["p16", "append"], entry="kvcache", append_new=True, **_lse),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
@pytest.mark.parametrize("garbage", [float("inf"), float("-inf"), 0.0], ids=["inf", "-inf", "zero"])
def test_unused_slots_change_nothing(scenario, garbage):
    seed = session_seed()
    out_nan, lse_nan = call_flashseek(scenario, make_inputs(scenario, "cuda", seed=seed))
    out_other, lse_other = call_flashseek(scenario, make_inputs(scenario, "cuda", seed=seed, fill_unused=garbage))
    assert torch.isfinite(out_nan.float()).all(), f"{scenario.name}: NaN in unused slots reached the output"
    assert torch.equal(out_nan.view(torch.int16), out_other.view(torch.int16)), (
        f"{scenario.name}: unused slots holding NaN vs {garbage} give different outputs (max diff "
        f"{(out_nan.float() - out_other.float()).abs().max().item():.3g})")
    assert torch.equal(lse_nan, lse_other), f"{scenario.name}: unused-slot contents changed the LSE"
