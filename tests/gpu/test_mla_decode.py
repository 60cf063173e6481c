"""MLA decode (q 64 + q_v 512 against one 576-wide cache row, dv 512) and context parallel, end to end against the
independent reference (flashseek.testing.reference, which forms q.k + q_v.v and the global key positions of a
context-parallel rank itself). Every MLA-decode scenario of the performance grid (decode, short prefills, context
parallel W 2/4/8), plus small cases that vary what the grid fixes: heads, query lengths, lengths at block edges,
page sizes, KV layouts, splits (with and without scheduler metadata), LSE, fp16, a window, zero lengths, context
parallel ranks with causal short prefills and non-causal, and context parallel through the normal kernel.
Unused cache slots hold NaN in every case."""

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario, performance_grid, select  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek, check_scenario  # noqa: E402

GRID = [s for s in select(performance_grid(), families=["mla"]) if s.q_v]


def _mla(hq, batch, *suffix, **kw):
    kw.setdefault("page_size", 64)
    kw.setdefault("softmax_scale", 192 ** -0.5)  # DeepSeek's scale; None tests FA3's default (d + dv)^-0.5
    return make_scenario("mla", custom_heads(hq, 1, 64, 512), batch, suffix=list(suffix), q_v=True, **kw)


SMALL = [
    _mla(16, "8q1s700", "p64"),
    _mla(128, "4q8s300", "p128", page_size=128),
    _mla(16, "q1s1_q1s63_q1s64_q1s65_q3s129_q2s2", "block-edges", return_lse=True),
    _mla(8, "5q1s2000", "h8"),
    _mla(32, "q17s500_q1s1000_q0s0_q1s0_q0s9", "zero-lengths", return_lse=True),
    _mla(16, "4q1s3000", "p16", page_size=16),
    _mla(16, "3q2s1000", "p48", page_size=48),
    _mla(16, "3q1s5000", "splits7", num_splits=7, return_lse=True),
    _mla(128, "2q1s9000", "splits0-md", use_scheduler_metadata=True),
    _mla(16, "6q1s1500", "lse", return_lse=True),
    _mla(16, "4q4s900", "fp16", dtype="fp16"),
    _mla(16, "4q1s800", "default-scale", softmax_scale=None),
    _mla(16, "q40s1000_4q1s777", "varlen", kv_layout="varlen"),
    _mla(16, "4q1s800", "batched", kv_layout="batched", kv_gap=37),
    _mla(16, "2q5s900", "window100", window=(99, 0)),
    _mla(16, "2q64s900", "noncausal", causal=False, return_lse=True),
    _mla(16, "q1s1000_q3s20", "out-none", out_given=False),
    _mla(16, "q50s1000", "q-row-pad", q_row_pad=64),
    _mla(128, "q3s0_q1s5", "tiny"),
    # context parallel: this rank holds global keys j * W + r; causal limits use the global length
    _mla(16, "4q1s3000", "cp2-r0", cp_world_size=2, cp_rank=0),
    _mla(16, "3q7s2500", "cp4-r1-prefill", cp_world_size=4, cp_rank=1),
    _mla(128, "2q3s1100", "cp8-r5-splits3", cp_world_size=8, cp_rank=5, num_splits=3, return_lse=True),
    _mla(16, "2q9s700", "cp2-r1-noncausal", cp_world_size=2, cp_rank=1, causal=False, return_lse=True),
    _mla(16, "q30s20_q5s3", "cp4-r3-sq-gt-sk", cp_world_size=4, cp_rank=3, return_lse=True),
    # context parallel through the normal kernel (block_m 64 and 128)
    make_scenario("mla", custom_heads(16, 2, 128), "8q1s900", suffix=["p16", "cp4-normal"], cp_world_size=4,
                  cp_rank=1),
    make_scenario("mla", custom_heads(8, 2, 128), "2q100s1000", suffix=["p16", "cp2-normal-prefill"],
                  cp_world_size=2, cp_rank=1, return_lse=True),
]


@pytest.mark.parametrize("scenario", GRID, ids=[s.name for s in GRID])
def test_grid_scenario(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.parametrize("scenario", SMALL, ids=[s.name for s in SMALL])
def test_small_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


def test_no_split_is_deterministic():
    s = _mla(128, "4q1s3000", "det", num_splits=1)
    inputs = make_inputs(s, "cuda", seed=session_seed())
    first, _ = call_flashseek(s, inputs)
    first = first.clone()
    second, _ = call_flashseek(s, inputs)
    assert torch.equal(first.view(torch.int16), second.view(torch.int16))


@pytest.mark.parametrize("field,value", [("softcap", 30.0), ("sinks", True)])
def test_unsupported_combinations_name_the_argument(field, value):
    s = _mla(16, "2q1s100", field, **{field: value})
    inputs = make_inputs(s, "cuda", seed=session_seed())
    with pytest.raises(NotImplementedError, match="softcap" if field == "softcap" else "s_aux"):
        call_flashseek(s, inputs)
