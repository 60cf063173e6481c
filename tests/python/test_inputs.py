"""make_inputs on CPU with tiny shapes: layouts and strides as vLLM passes them, poison exactly where the call
must not read, block tables in range, the reference's per-sequence gather, the kvcache and cascade extras."""

import math

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: input-builder tests need it")

from flashseek.testing import grid as g  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.randomized import RANDOM_FAMILIES, random_scenario  # noqa: E402
from flashseek.testing.reference import reference_outputs  # noqa: E402

H = g.custom_heads(4, 2, 8)


def _sc(batch, **kw):
    return g.make_scenario("edge", H, batch, suffix=["t"], **kw)


def test_paged_layout_and_poison():
    s = _sc("q3s20_q1s5_q2s16", page_size=8, return_lse=True)
    inp = make_inputs(s, "cpu", seed=3)
    kw = inp.kwargs
    k, bt = kw["k"], kw["block_table"]
    assert k.shape[1:] == (8, 2, 8) and k.is_contiguous()
    assert kw["seqused_k"].tolist() == [20, 5, 16] and kw["cu_seqlens_q"].tolist() == [0, 3, 4, 6]
    assert kw["max_seqlen_q"] == 3 and kw["max_seqlen_k"] == 20 and bt.dtype == torch.int32
    assert bt.shape == (3, 3) and int(bt.min()) >= 0 and int(bt.max()) < k.shape[0]
    # pages 3 + 1 + 2 = 6 used slots 20 + 5 + 16 = 41; everything else NaN, used slots finite
    used_pages = set()
    for i, n in enumerate([20, 5, 16]):
        used_pages |= set(bt[i, : math.ceil(n / 8)].tolist())
    assert len(used_pages) == 6  # allocator mode: no page shared
    nan_slots = torch.isnan(k[..., 0, 0]).sum().item()
    assert nan_slots == k.shape[0] * 8 - 41
    assert torch.isnan(kw["out"]).all() and kw["out"].shape == (6, 4, 8)
    # the gather the reference uses equals the cache content, finite
    k1, v1 = inp.ref_seq(0).k, inp.ref_seq(0).v
    assert k1.shape == (20, 2, 8) and torch.isfinite(k1).all() and torch.isfinite(v1).all()
    assert torch.equal(k1[8:16], k[int(bt[0, 1])])


def test_hnd_strides_and_row_padding():
    s = _sc("q3s20_q1s5", page_size=8, hnd=True, q_row_pad=5, block_table_pad=4)
    inp = make_inputs(s, "cpu", seed=4)
    k, q, bt, out = inp.kwargs["k"], inp.kwargs["q"], inp.kwargs["block_table"], inp.kwargs["out"]
    assert k.shape[1:] == (8, 2, 8) and k.stride() == (2 * 8 * 8, 8, 8 * 8, 1)  # head stride = page * d
    assert q.shape == (4, 4, 8) and q.stride() == (4 * 8 + 5, 8, 1)
    assert bt.shape == (2, 3) and bt.stride() == (7, 1)
    assert out.stride() == (4 * 8 + 5, 8, 1) and inp.out_pad_snapshot.shape == (4, 5)
    assert torch.isnan(inp.out_buffer[:, :32]).all() and torch.all(inp.out_buffer[:, 32:] == 7.0)
    assert torch.isfinite(q).all()


def test_operator_mode_pages_may_repeat_and_unused_entries_valid():
    s = _sc("q1s40_q5s18_q9s30", page_size=4, block_table_repeats=True, num_blocks=12)
    inp = make_inputs(s, "cpu", seed=5)
    bt, k = inp.kwargs["block_table"], inp.kwargs["k"]
    assert k.shape[0] == 12 and int(bt.max()) < 12 and int(bt.min()) >= 0
    # with 12 pages for 10 + 5 + 8 page references, pages repeat; data in a shared page stays finite
    for i in range(3):
        assert torch.isfinite(inp.ref_seq(i).k).all()


def test_fill_unused_changes_only_unused_slots():
    s = _sc("q3s20_q1s5", page_size=8)
    a = make_inputs(s, "cpu", seed=6)
    b = make_inputs(s, "cpu", seed=6, fill_unused=0.0)
    assert torch.equal(a.kwargs["q"], b.kwargs["q"]) and torch.equal(a.kwargs["block_table"], b.kwargs["block_table"])
    nan = torch.isnan(a.kwargs["k"])
    assert nan.any() and torch.all(b.kwargs["k"][nan] == 0) and torch.equal(a.kwargs["k"][~nan], b.kwargs["k"][~nan])


def test_varlen_and_batched_layouts():
    inp = make_inputs(_sc("q3s7_q2s2", kv_layout="varlen"), "cpu", seed=7)
    assert inp.kwargs["cu_seqlens_k"].tolist() == [0, 7, 9] and inp.kwargs["k"].shape == (9, 2, 8)
    assert "block_table" not in inp.kwargs and "seqused_k" not in inp.kwargs
    inp = make_inputs(_sc("q3s7_q2s2", kv_layout="batched", kv_gap=3), "cpu", seed=7)
    k = inp.kwargs["k"]
    assert k.shape == (2, 10, 2, 8) and inp.kwargs["seqused_k"].tolist() == [7, 2]
    assert torch.isnan(k[0, 7:]).all() and torch.isnan(k[1, 2:]).all() and torch.isfinite(k[0, :7]).all()


def test_sinks_descales_and_metadata_kwargs():
    inp = make_inputs(_sc("q2s9", sinks=True, sink_value=-8.0, use_scheduler_metadata=True, num_splits=4), "cpu",
                      seed=8)
    assert inp.kwargs["s_aux"].dtype == torch.float32 and torch.all(inp.kwargs["s_aux"] == -8.0)
    md = inp.metadata_kwargs
    assert md["num_splits"] == 4 and md["page_size"] == 16 and md["cache_seqlens"] is inp.kwargs["seqused_k"]
    if getattr(torch, "float8_e4m3fn", None) is not None:
        inp = make_inputs(_sc("q2s9_q1s3", dtype="e4m3", descale="stride0"), "cpu", seed=8)
        assert inp.kwargs["q"].dtype == torch.float8_e4m3fn and inp.kwargs["out"].dtype == torch.bfloat16
        assert inp.kwargs["k_descale"].shape == (2, 2) and inp.kwargs["k_descale"].stride() == (0, 0)


def test_cascade_kwargs():
    s = _sc("q2s40_q1s33_q3s50", page_size=8, entry="cascade", cascade_prefix=16)
    inp = make_inputs(s, "cpu", seed=9)
    bt = inp.kwargs["block_table"]
    assert torch.equal(bt[:, :2], bt[:1, :2].expand(3, 2))  # the shared prefix pages
    pre, suf = inp.cascade["prefix"], inp.cascade["suffix"]
    assert pre["cu_seqlens_q"].tolist() == [0, 6] and pre["seqused_k"].tolist() == [16] and not pre["causal"]
    assert suf["seqused_k"].tolist() == [24, 17, 34] and suf["causal"] and pre["return_softmax_lse"]
    assert suf["block_table"].data_ptr() == bt[:, 2:].data_ptr() and suf["block_table"].stride() == bt.stride()


@pytest.mark.parametrize("layout", ["batched", "paged"])
def test_kvcache_append_expected_cache(layout):
    extra = dict(kv_layout="batched", leftpad=True, cache_batch_idx=True) if layout == "batched" else dict(page_size=4)
    s = g.make_scenario("kvcache", H, "3q2s20", suffix=["t"], entry="kvcache", append_new=True, rotary="neox",
                        rotary_dim=4, **extra)
    inp = make_inputs(s, "cpu", seed=10)
    kw = inp.kwargs
    assert kw["q"].shape == (3, 2, 4, 8) and kw["k"].shape == (3, 2, 2, 8)
    exp_k, _ = inp.expected_caches
    # before the call the append slots are poison; after it (expected) they hold the rotated new keys
    assert torch.isnan(kw["k_cache"]).sum() > torch.isnan(exp_k).sum()
    for i in range(3):
        r = inp.ref_seq(i)
        assert r.k.shape == (20, 2, 8) and torch.isfinite(r.k).all()
    if layout == "batched":
        lp, seqlens = kw["cache_leftpad"].tolist(), kw["cache_seqlens"].tolist()
        assert all(sl - l_ == 18 for sl, l_ in zip(seqlens, lp))  # 20 keys, 2 of them appended by the call


def test_reference_runs_on_every_random_family():
    """One random scenario of each family builds and runs through the reference on CPU (shapes kept small by
    picking, for each family, the first index whose sizes are small)."""
    for family in RANDOM_FAMILIES:
        for i in range(50):
            s = random_scenario(family, 123, i)
            if s.batch_size <= 8 and max(s.k_lens) <= 1200 and s.num_heads_q <= 8:
                break
        else:
            continue
        inp = make_inputs(s, "cpu", seed=1)
        ref = reference_outputs(inp)
        assert ref.out.shape == (s.total_q, s.num_heads_q, s.head_dim_v) and torch.isfinite(ref.out).all(), s.name
