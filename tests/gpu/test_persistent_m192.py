"""The 192-row d64 tile's persistent kernel (the default since docs/perf-log.md entry 42): bf16 d64 prefills short
enough for the persistent kernel (causal 1-2k, sliding windows, sinks, mixed batches, non-causal varlen with
softcap) on three consumer warpgroups of 64 rows instead of two. Each case runs in this process with whatever
FLASHSEEK_EXPERIMENT is set (the default: the 192-row persistent kernel), and test_module_under re-runs the module
in a subprocess under no-persist192 (the 128-row persistent kernel) and persist192-strict (the 192-row tile only
where the persistent kernel runs, entry 44); the variable is read once per process. The page-1 case
takes the one-tile kernel (no TMA, so no persistent kernel) and the fp16 case the 128-row tile on either setting."""

from gpu_support import assert_passes, require_kernels, rerun_module_under, running_under, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

RERUN_UNDER = ["no-persist192", "persist192-strict"]
UNDER = running_under(RERUN_UNDER)


def _sc(heads, batch, name, **kw):
    return make_scenario("edge", heads, batch, suffix=["persist192", name], **kw)


CASES = [
    _sc("OSS", "q1k", "causal", causal=True),
    _sc("OSS", "q2k", "w128", causal=True, window=(127, 0)),
    _sc("OSS", "q1k", "sinks-w128-lse", causal=True, window=(127, 0), sinks=True, return_lse=True),
    _sc("OSS", "q2k_32q1s2k", "mixed-sinks", causal=True, sinks=True),
    _sc(custom_heads(32, 32, 64), "4q1k", "mha-varlen-softcap", kv_layout="varlen", causal=False, softcap=30.0),
    _sc("OSS", "q1k", "page1", page_size=1, causal=True),
    _sc("OSS", "2q1k", "fp16", dtype="fp16", causal=True),
    _sc("OSS", "3q700", "noout-lse", causal=True, out_given=False, return_lse=True),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_persist192_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.skipif(UNDER, reason="this process already runs under one of the rerun values")
@pytest.mark.parametrize("experiment", RERUN_UNDER)
def test_module_under(experiment):
    rerun_module_under(__file__, experiment)
