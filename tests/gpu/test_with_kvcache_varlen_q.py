"""flash_attn_with_kvcache with a varlen q (cu_seqlens_q, max_seqlen_q) against a paged cache, as upstream FA3
takes it: the same bits as flash_attn_varlen_func on the same cache and the same max_seqlen_k (the page table's
width, which flash_attn_with_kvcache derives; both unsplit), within the reference's rules, and the cases it does not
take named in their errors."""

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import check_call  # noqa: E402

CASES = [
    make_scenario("spec-decode", "L70t8", "8q4s2k", suffix=["p16", "kvcache-varlen-q"], out_given=False,
                  return_lse=True),
    make_scenario("mixed", "L8", "q300s2k_16q1s3000", suffix=["p16", "kvcache-varlen-q"], out_given=False),
    make_scenario("sinks", "OSSt8", "q77s500_4q1s900", suffix=["p16", "kvcache-varlen-q-w128"], out_given=False,
                  sinks=True, window=(127, 0), return_lse=True),
]


def _with_kvcache(inputs, **override):
    kw = inputs.kwargs
    args = dict(cache_seqlens=kw["seqused_k"], page_table=kw["block_table"], cu_seqlens_q=kw["cu_seqlens_q"],
                max_seqlen_q=kw["max_seqlen_q"], softmax_scale=kw["softmax_scale"], causal=kw["causal"],
                window_size=kw["window_size"], softcap=kw["softcap"], num_splits=1,
                return_softmax_lse=kw["return_softmax_lse"], s_aux=kw.get("s_aux"))
    args.update(override)
    return flashseek.flash_attn_with_kvcache(kw["q"], kw["k"], kw["v"], **args)


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_varlen_q_equals_the_varlen_call(scenario):
    seed = session_seed()
    inputs = make_inputs(scenario, "cuda", seed=seed)
    got = _with_kvcache(inputs)
    kw = inputs.kwargs
    # the max_seqlen_k flash_attn_with_kvcache derives from the page table (its plan sees the same call)
    want = flashseek.flash_attn_varlen_func(**dict(kw, out=None, num_splits=1,
                                                   max_seqlen_k=kw["block_table"].shape[1] * kw["k"].shape[1]))
    out, lse = got if scenario.return_lse else (got, None)
    want_out, want_lse = want if scenario.return_lse else (want, None)
    assert out.shape == (scenario.total_q, scenario.num_heads_q, scenario.head_dim_v)
    assert torch.equal(out.view(torch.int16), want_out.view(torch.int16)), scenario.name
    if scenario.return_lse:
        assert lse.shape == (scenario.num_heads_q, scenario.total_q)
        assert torch.equal(lse, want_lse), scenario.name
    assert_passes(scenario, check_call(scenario, inputs, out, lse), seed)


def test_varlen_q_rejections_name_the_argument():
    inputs = make_inputs(CASES[0], "cuda", seed=session_seed())
    kw = inputs.kwargs
    with pytest.raises(ValueError, match="max_seqlen_q: required with cu_seqlens_q"):
        _with_kvcache(inputs, max_seqlen_q=None)
    with pytest.raises(NotImplementedError, match="appending k, v or rotary with a varlen q"):
        _with_kvcache(inputs, k=kw["k"][:2, :1], v=kw["v"][:2, :1])
    with pytest.raises(NotImplementedError, match="cu_seqlens_k_new"):
        _with_kvcache(inputs, cu_seqlens_k_new=kw["cu_seqlens_q"])
    with pytest.raises(ValueError, match="q: expected 3 dims"):
        flashseek.flash_attn_with_kvcache(kw["q"].unsqueeze(0), kw["k"], kw["v"], cache_seqlens=kw["seqused_k"],
                                          page_table=kw["block_table"], cu_seqlens_q=kw["cu_seqlens_q"],
                                          max_seqlen_q=kw["max_seqlen_q"])
