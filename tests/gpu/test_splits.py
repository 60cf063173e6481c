"""Split-KV consistency: num_splits = 1 (no split) against several splits on the same inputs. The combine is in
fp32, so results may differ only by the order of fp32 adds and the final rounding: max diff <= 2e-3, mean diff
<= 1e-4 (and the LSE within 1e-4). The unsplit result must also pass the reference check."""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import check_call, prepare_call  # noqa: E402

MAX_DIFF, MEAN_DIFF, LSE_DIFF = 2e-3, 1e-4, 1e-4
_common = dict(out_given=False, return_lse=True)
CASES = [
    make_scenario("decode-splitkv", "L8", "4q1s16k", suffix=["p16"], **_common),
    make_scenario("decode-splitkv", "L70t8", "q1s32k_q1s3_q1s5000", suffix=["p16"], **_common),
    make_scenario("sinks", "OSSt8", "4q1s16k", suffix=["p16", "sinks"], sinks=True, **_common),
    make_scenario("sliding-window", "OSSt8", "4q1s16k", suffix=["p16", "w4096"], window=(4095, 0), **_common),
    make_scenario("softcap", "G9", "2q1s8k", suffix=["p16", "sc50"], softcap=50.0, **_common),
    make_scenario("spec-decode", "L70t8", "8q4s8k", suffix=["p16"], **_common),
    make_scenario("mixed", "L8", "q300s2k_16q1s8k", suffix=["p16"], **_common),
    # 45 tiles: splits; q has 133 rows against 5 x 129, so the combine runs over q's rows (entry 49)
    make_scenario("mixed", "L70t8", "q129s8k_4q1s8k", suffix=["p16"], **_common),
    make_scenario("decode-splitkv", "L8", "4q1s16k", suffix=["p16", "fp16"], dtype="fp16", **_common),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
@pytest.mark.parametrize("splits", [2, 8, 32])
def test_splits_agree_with_no_split(scenario, splits):
    seed = session_seed()
    inputs = make_inputs(scenario, "cuda", seed=seed)
    inputs.kwargs["num_splits"] = 1
    out1, lse1 = prepare_call(scenario, inputs)()
    out1, lse1 = out1.clone(), lse1.clone()
    res = check_call(scenario, inputs, out1, lse1)
    assert res.correct, f"{scenario.name} num_splits=1 (seed {seed}): {res.summary()}"
    inputs.kwargs["num_splits"] = splits
    out_n, lse_n = prepare_call(scenario, inputs)()
    diff = (out_n.float() - out1.float()).abs()
    assert torch.isfinite(out_n.float()).all(), f"{scenario.name} num_splits={splits}: non-finite output"
    assert diff.max().item() <= MAX_DIFF and diff.mean().item() <= MEAN_DIFF, (
        f"{scenario.name} num_splits={splits} vs 1 (seed {seed}): max diff {diff.max().item():.3g} "
        f"(<= {MAX_DIFF}), mean {diff.mean().item():.3g} (<= {MEAN_DIFF})")
    fin = torch.isfinite(lse1)
    assert torch.equal(fin, torch.isfinite(lse_n)), f"{scenario.name} num_splits={splits}: LSE infinities moved"
    ldiff = (lse_n[fin] - lse1[fin]).abs().max().item() if fin.any() else 0.0
    assert ldiff <= LSE_DIFF, f"{scenario.name} num_splits={splits}: LSE diff {ldiff:.3g} > {LSE_DIFF}"
