"""The whole testing layer on CPU, driven through flashseek's real Python API with a pure-torch stand-in for the
compiled binding: correct behaviour passes every kind of scenario, and each planted bug is caught."""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: these tests need it")

import flashseek.api as api  # noqa: E402
from fake_binding import FakeBinding  # noqa: E402
from flashseek.testing import grid as g  # noqa: E402
from flashseek.testing.run import run_scenario  # noqa: E402

H = g.custom_heads(4, 2, 16)
H1 = g.custom_heads(4, 1, 32)


@pytest.fixture
def binding(monkeypatch):
    def install(bug=None):
        fake = FakeBinding(bug)
        monkeypatch.setattr(api, "_C", fake)
        monkeypatch.setattr(api, "_IMPORT_ERROR", None)
        return fake
    return install


def _sc(family, batch, name, heads=H, **kw):
    return g.make_scenario(family, heads, batch, suffix=[name], **kw)


GOOD = [
    _sc("decode-paged", "5q1s37", "paged", page_size=8),
    _sc("mixed", "q20s50_3q1s33_q4s9", "mixed-lse", page_size=8, return_lse=True, out_given=False),
    _sc("prefill-dense", "2q23", "varlen", kv_layout="varlen"),
    _sc("prefill-varlen", "q17_q33", "noncausal-window", kv_layout="varlen", causal=False, window=(3, 2)),
    _sc("prefill-varlen", "q17_q33", "gaps", kv_layout="batched", kv_gap=5),
    _sc("sliding-window", "q20s50_3q1s33", "window", page_size=8, window=(6, 0)),
    _sc("softcap", "q20s50_3q1s33", "softcap", page_size=8, softcap=5.0, dtype="fp16"),
    _sc("sinks", "q20s50_3q1s33", "sinks", page_size=8, sinks=True, return_lse=True),
    _sc("sinks", "q20s50_3q1s2", "sinks-8", page_size=8, sinks=True, sink_value=-8.0, window=(3, 0)),
    _sc("decode-splitkv", "2q1s300", "md", page_size=16, use_scheduler_metadata=True, num_splits=4),
    _sc("edge", "q5s20_q0s0_q0s7_q3s0_q1s1", "zero-lengths", page_size=4, return_lse=True),
    _sc("edge", "3q1s0", "total-k0", page_size=4, return_lse=True),
    _sc("edge", "q30s10_q4s2", "sq-gt-sk", page_size=4, return_lse=True),
    _sc("edge", "q5s20_q3s9", "hnd-strides", page_size=4, hnd=True, q_row_pad=16, block_table_pad=3),
    _sc("edge", "q5s20_q3s9", "page1", page_size=1),
    _sc("operator-grid", "q5s40_q1s33_q9s30", "repeats", page_size=4, block_table_repeats=True, num_blocks=20),
    _sc("lse", "q5s40_q3s33_q1s50", "cascade", page_size=8, entry="cascade", cascade_prefix=16),
    _sc("lse", "q5s40_q3s33_q1s50", "cascade-noout", page_size=8, entry="cascade", cascade_prefix=16,
        out_given=False, softcap=5.0),
    _sc("kvcache", "3q2s20", "batched-append-rotary", entry="kvcache", kv_layout="batched", append_new=True,
        rotary="interleaved", rotary_dim=8, leftpad=True, cache_batch_idx=True, return_lse=True),
    _sc("kvcache", "3q1s20", "paged-append-neox", entry="kvcache", page_size=4, append_new=True, rotary="neox",
        rotary_dim=16, causal=False),
    _sc("kvcache", "3q1s20", "leftpad-noappend", entry="kvcache", kv_layout="batched", leftpad=True),
    _sc("fp8", "q20s50_3q1s33", "fp8-random", page_size=8, dtype="e4m3", descale="random", return_lse=True),
    _sc("fp8", "q20s50_3q1s33", "fp8-stride0-hnd", page_size=8, dtype="e4m3", descale="stride0", hnd=True,
        softcap=5.0),
    _sc("fp8", "q20s50_3q1s33", "bf16-q-fp8-cache", page_size=8, kv_dtype="e4m3", descale="random",
        return_lse=True),
]


@pytest.mark.parametrize("scenario", GOOD, ids=[s.name for s in GOOD])
def test_correct_binding_passes(binding, scenario):
    binding()
    res = run_scenario(scenario, "cpu", seed=11).result
    assert res.correct, res.summary()
    assert res.err <= res.err_bound


def test_operator_grid_small_copies_pass(binding):
    """Every operator-grid case, shrunk (fewer blocks, same sequences and features), runs through the layer."""
    binding()
    for s in g.operator_grid():
        small = s.with_(num_blocks=400, num_heads_q=4, num_heads_kv=2 if s.num_heads_kv != s.num_heads_q else 4,
                        head_dim=min(s.head_dim, 32), head_dim_v=min(s.head_dim_v, 32))
        if s.entry == "cascade" and len(s.seqs) > 50:
            small = small.with_(seqs=s.seqs[:12])
        res = run_scenario(small, "cpu", seed=12).result
        if s.unsupported_reason:
            assert res.error and res.unsupported, s.name
        else:
            assert res.correct, f"{s.name}: {res.summary()}"


BUGGY = [
    ("top_left_causal", _sc("mixed", "q20s50_3q1s33", "x", page_size=8)),
    ("nan_leak", _sc("decode-paged", "5q1s37", "x", page_size=8)),
    ("ignore_sink", _sc("sinks", "q20s50_3q1s33", "x", page_size=8, sinks=True)),
    ("lse_plus_inf", _sc("edge", "q30s10_q4s2", "x", page_size=4, return_lse=True)),
    ("new_out", _sc("decode-paged", "5q1s37", "x", page_size=8)),
    ("window_off_by_one", _sc("sliding-window", "q20s50_3q1s33", "x", page_size=8, window=(6, 0))),
    ("skip_last_page", _sc("decode-paged", "5q1s37", "x", page_size=8)),
    ("no_append", _sc("kvcache", "3q2s20", "x", entry="kvcache", kv_layout="batched", append_new=True)),
    ("fp8_no_descale", _sc("fp8", "q20s50_3q1s33", "x", page_size=8, dtype="e4m3", descale="random")),
]


@pytest.mark.parametrize("bug,scenario", BUGGY, ids=[b for b, _ in BUGGY])
def test_planted_bug_is_caught(binding, bug, scenario):
    binding(bug)
    res = run_scenario(scenario, "cpu", seed=13).result
    assert not res.correct, f"planted bug {bug} passed: {res.summary()}"
    assert res.reason


def test_unsupported_is_an_error_not_a_pass(binding):
    binding()
    s = _sc("mla", "q2s20_q1s9", "mla-decode", heads=g.custom_heads(4, 1, 16, 32), q_v=True, page_size=4,
            unsupported_reason=g.UNSUPPORTED_MLA_DECODE)
    res = run_scenario(s, "cpu", seed=14).result
    assert not res.correct and res.unsupported and res.error.startswith("unsupported: MLA decode")


def test_unsupported_that_runs_is_checked(binding):
    binding()
    if getattr(torch, "float8_e4m3fn", None) is None:
        pytest.skip("this torch has no float8_e4m3fn")
    s = _sc("fp8", "q5s20_q3s9", "fp8", dtype="e4m3", descale="random", page_size=4,
            unsupported_reason=g.UNSUPPORTED_FP8)
    res = run_scenario(s, "cpu", seed=15).result
    assert res.error is None and "marked unsupported" in res.extra["note"]
