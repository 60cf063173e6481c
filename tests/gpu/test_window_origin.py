"""Windowed tiles' key blocks from their first visible key (FwdParams::window_origin_rows, the default since
docs/perf-log.md entry 102): the window's keys are shifted to start a block where that saves one, by whole TMA
boxes in a paged cache (pages 16 and 64 here) and by any row elsewhere; not where the caller fixes the split count
(num_splits = 1 is the batch-invariant mode). Every case runs in this process under whatever FLASHSEEK_EXPERIMENT
is set (the default: the origin on), and test_module_under re-runs the module in a subprocess under
no-window-origin (blocks from key 0) and under no-d64-window-tile (entry 103, the default: the bf16 d64 windows
that fit one 176-key block take that tile, the OSS cases here, the left-padded one on its copying producer; under
no-d64-window-tile they take the 128-key blocks). The cases reach the shift's edges: the heuristic's split tiles,
the sequence's last (partial) block, sinks, a two-sided window, left padding (no TMA: the copying producer), native
e4m3 on the persistent kernel, decode tiles, a window longer than the sequence (no shift), and window sides of
INT_MAX (unbounded)."""

from gpu_support import assert_passes, require_kernels, rerun_module_under, running_under, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

RERUN_UNDER = ["no-window-origin", "no-d64-window-tile"]
UNDER = running_under(RERUN_UNDER)


def _sc(heads, batch, name, **kw):
    return make_scenario("edge", heads, batch, suffix=["window-origin", name], **kw)


CASES = [
    _sc("OSS", "q2k", "varlen-w128", kv_layout="varlen", causal=True, window=(127, 0)),
    _sc("OSS", "q1500", "p16-w128-lse", causal=True, window=(127, 0), return_lse=True),
    # the caller's split count: blocks from key 0 (key_origin.h window_origin_rows_of); the heuristic's splits (16
    # CTAs: the decode is split) with the origin
    _sc("L8", "q1500", "p16-w200-splits3-lse", causal=True, window=(199, 0), num_splits=3, return_lse=True),
    _sc("L8", "2q1s9000", "p16-w4000-heuristic-splits-lse", causal=True, window=(3999, 0), return_lse=True),
    _sc("OSS", "3q700", "p64-w100-sinks", page_size=64, causal=True, window=(99, 0), sinks=True),
    _sc(custom_heads(16, 16, 128), "4q1k", "varlen-bidir-w63", kv_layout="varlen", causal=False, window=(63, 63)),
    _sc("OSS", "2q1k", "p16-w128-leftpad", causal=True, window=(127, 0), leftpad=True),
    _sc("OSS", "q2k", "e4m3-w128", dtype="e4m3", causal=True, window=(127, 0), descale="random"),
    _sc("OSS", "8q1s3000", "decode-w128", causal=True, window=(127, 0)),
    _sc("OSS", "q2k_32q1s2k", "mixed-sinks-w128", causal=True, window=(127, 0), sinks=True),
    _sc("L8", "2q1k", "w4096-past-the-sequence", causal=True, window=(4095, 0)),
    # the one-block d64 tile (entry 103) at its edges: a two-sided window with softcap and LSE (24 + 126 + 15 keys),
    # a left side of 137 (24 + 137 + 15 = 176, the most that fits) over sequences shorter than the window and a
    # decode among them, and sinks on a grid of more than two waves (its persistent kernel)
    _sc("OSS", "2q1500", "p16-bidir-w63-softcap-lse", causal=False, window=(63, 63), softcap=30.0,
        return_lse=True),
    _sc("OSS", "q1000_q37_q1s500", "p16-w137-short-seqs", causal=True, window=(137, 0)),
    _sc("OSS", "q6k", "p16-w128-sinks-persistent", causal=True, window=(127, 0), sinks=True, return_lse=True),
    # Sides of INT_MAX keys are unbounded (run.cpp makes a side of 2^30 or more -1; before, tok + diag + side wrapped
    # in the kernels' int limits to no visible key).
    _sc("L8", "2q700s500", "w-int-max-causal", causal=True, window=(2**31 - 1, 0)),
    _sc("OSS", "2q300s900", "w-int-max-right", kv_layout="varlen", causal=False, window=(7, 2**31 - 1)),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_window_origin_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.skipif(UNDER, reason="this process already runs under one of the rerun values")
@pytest.mark.parametrize("experiment", RERUN_UNDER)
def test_module_under(experiment):
    rerun_module_under(__file__, experiment)
