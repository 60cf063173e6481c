"""The d96 tiles (FLASHSEEK_EXPERIMENT=d96, docs/perf-log.md entry 38): 16-bit head dims 72-96 on tiles of 96
columns (Q, K and V in three 64-byte-swizzled column blocks, V as an MN-major wgmma operand) instead of padded to
128. Prefill (128 rows; long bf16 ones on 192 rows, entry 67; short bf16 ones on the d96 tile's persistent kernel,
entry 68), decode (64 rows), splits and their combine at dv 96, varlen, paged by TMA and by cp.async (1-token
pages), batched caches with unused slots, windows, softcap, sinks, LSE, fp16 and bf16. Each case runs in this
process with whatever FLASHSEEK_EXPERIMENT is set (by default decodes pad to 128), test_module_under_d96 re-runs
the module in a subprocess under d96 (every 16-bit case on the d96 tiles; the variable is read once per process),
and test_module_under_d96_before_m192 under no-d96-m192,no-d96-persist (the 128-row d96 tile on long prefills,
short ones padded to 128: the rule before entries 67 and 68)."""

import os

from gpu_support import assert_passes, require_kernels, rerun_module_under, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

UNDER_D96 = "d96" in os.environ.get("FLASHSEEK_EXPERIMENT", "").split(",")
UNDER_NO_D96_M192 = "no-d96-m192" in os.environ.get("FLASHSEEK_EXPERIMENT", "").split(",")


def _sc(heads, batch, name, **kw):
    return make_scenario("edge", heads, batch, suffix=["d96", name], **kw)


CASES = [
    _sc("P3", "q1k", "p3-prefill-causal", causal=True),
    _sc(custom_heads(8, 2, 80), "q300s1k_16q1s700", "d80-mixed-lse", causal=True, return_lse=True),
    _sc(custom_heads(16, 16, 72), "q257_q63_q1000", "d72-varlen-noncausal", kv_layout="varlen", causal=False),
    _sc(custom_heads(8, 2, 96), "32q1s3000", "d96-decode-splits-md", causal=True, num_splits=8,
        use_scheduler_metadata=True, return_lse=True),
    _sc(custom_heads(8, 2, 80), "q500s1500_8q1s900", "d80-window-softcap", causal=True, window=(255, 0),
        softcap=30.0),
    _sc(custom_heads(8, 2, 96), "q300s800_4q1s2000", "d96-sinks", causal=True, sinks=True, return_lse=True),
    _sc(custom_heads(8, 2, 80), "q200s600_16q1s1200", "d80-fp16", dtype="fp16", causal=True),
    _sc(custom_heads(8, 2, 96), "16q1s2k", "d96-batched-gaps", kv_layout="batched", kv_gap=37, causal=True),
    _sc(custom_heads(8, 2, 72), "q129s463_4q1s1328", "d72-page1", page_size=1, causal=True),
    _sc(custom_heads(4, 4, 96), "2q2k", "d96-noout", causal=True, out_given=False),
    # long prefills, the 192-row d96 tile's in bf16 (more than 12 key blocks a query on average)
    _sc(custom_heads(8, 8, 96), "q4000", "d96-long-causal", causal=True),
    _sc(custom_heads(16, 4, 80), "q3500_q2900_q77", "d80-long-varlen-lse", kv_layout="varlen", causal=False,
        return_lse=True),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_d96_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.skipif(UNDER_D96 or UNDER_NO_D96_M192, reason="this process already runs under an experiment")
def test_module_under_d96():
    rerun_module_under(__file__, "d96")


# The 128-row d96 one-tile prefill and the padded short prefills, which no-d96-m192,no-d96-persist keep for A/Bs.
@pytest.mark.skipif(UNDER_D96 or UNDER_NO_D96_M192, reason="this process already runs under an experiment")
def test_module_under_d96_before_m192():
    rerun_module_under(__file__, "no-d96-m192,no-d96-persist")
