"""The evaluator's per-scenario path and two baselines' batching on CPU: the runner with the stand-in binding and a
host-clock timer, SDPA (MATH backend standing in for cuDNN) and eager FlexAttention against the reference."""

import time

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: these tests need it")

import flashseek.api as api  # noqa: E402
from fake_binding import FakeBinding  # noqa: E402
from flashseek.eval import baselines as bl  # noqa: E402
from flashseek.eval.report import results_document  # noqa: E402
from flashseek.eval.runner import evaluate  # noqa: E402
from flashseek.eval.stats import summarize  # noqa: E402
from flashseek.eval.timing import Timing  # noqa: E402
from flashseek.testing import grid as g  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.reference import reference_outputs  # noqa: E402
from flashseek.testing.tolerance import vllm_rule  # noqa: E402

H = g.custom_heads(4, 2, 16)


class HostTimer:
    """DeviceTimer's interface on the host clock (CPU tests only)."""

    def host_us(self, fn):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e6

    def time(self, fn, mode, host_us=None):
        samples, last = [], None
        for _ in range(3):
            t0 = time.perf_counter()
            last = fn()
            samples.append((time.perf_counter() - t0) * 1e6)
        samples.sort()
        return Timing(samples[1], 0.0, samples[0], samples[-1], 3, "eager"), last


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(api, "_C", FakeBinding())
    monkeypatch.setattr(api, "_IMPORT_ERROR", None)


SCENARIOS = [
    g.make_scenario("decode-paged", H, "5q1s37", suffix=["x"], page_size=8),
    g.make_scenario("lse", H, "q5s40_q3s33_q1s50", suffix=["casc"], page_size=8, entry="cascade",
                    cascade_prefix=16),
    g.make_scenario("kvcache", H, "3q2s20", suffix=["kv"], entry="kvcache", kv_layout="batched", append_new=True),
    g.make_scenario("mla", g.custom_heads(4, 1, 16, 32), "q5s20", suffix=["f"], q_v=True, page_size=4,
                    unsupported_reason=g.UNSUPPORTED_MLA_DECODE),
]


def test_runner_records(fake):
    ceil = {"hbm_GBps": 4000.0, "bf16_TFLOPs": 700.0}
    recs = [evaluate(s, HostTimer(), ceil, [], None, seed=3, device="cpu") for s in SCENARIOS]
    for r in recs[:3]:
        assert r["correct"] and r["us"] > 0 and r["timed_output_matches_checked"], r
        assert r["roofline_frac"] is not None and r["speedup"] is None and r["baselines"] == {}
    assert recs[3]["error"].startswith("unsupported: MLA decode") and recs[3]["unsupported"]
    doc = results_document({"roofline": ceil}, recs, summarize(recs))
    assert doc["summary"]["correct"] == 3 and doc["summary"]["unsupported"] == 1


def test_runner_times_the_bf16_twin_of_an_fp8_scenario(fake):
    if getattr(torch, "float8_e4m3fn", None) is None:
        pytest.skip("this torch has no float8_e4m3fn")
    ceil = {"hbm_GBps": 4000.0, "bf16_TFLOPs": 700.0}
    s = g.make_scenario("fp8", H, "4q1s37", suffix=["x"], dtype="e4m3", descale="random", page_size=8)
    r = evaluate(s, HostTimer(), ceil, [], None, seed=3, device="cpu")
    assert r["correct"] and r["us"] > 0, r
    assert r["bf16_twin_us"] > 0 and "bf16_twin_error" not in r, r
    assert r["fp8_goal"] is None  # 37 keys: neither goal's shape
    assert summarize([r])["fp8_goals"]["decode"]["scenarios"] == 0


def test_runner_times_the_page64_twin_of_a_page16_decode(fake):
    ceil = {"hbm_GBps": 4000.0, "bf16_TFLOPs": 700.0}
    s = g.make_scenario("decode-paged", H, "4q1s150", suffix=["x"])
    assert s.page_size == 16
    r = evaluate(s, HostTimer(), ceil, [], None, seed=3, device="cpu")
    assert r["correct"] and r["us"] > 0, r
    assert r["p64_twin_us"] > 0 and "p64_twin_error" not in r, r
    assert "p64_twin_us" not in evaluate(g.make_scenario("decode-paged", H, "4q1s150", suffix=["y"], page_size=8),
                                         HostTimer(), ceil, [], None, seed=3, device="cpu")


def test_runner_times_the_dense_twin_of_a_paged_decode(fake):
    ceil = {"hbm_GBps": 4000.0, "bf16_TFLOPs": 700.0}
    r = evaluate(g.make_scenario("decode-paged", H, "4q1s150", suffix=["d"]), HostTimer(), ceil, [], None, seed=3,
                 device="cpu")
    assert r["correct"] and r["dense_twin_us"] > 0 and "dense_twin_error" not in r, r
    dense = evaluate(g.make_scenario("prefill-varlen", H, "2q30", suffix=["d"], kv_layout="varlen"), HostTimer(), ceil,
                     [], None, seed=3, device="cpu")
    assert "dense_twin_us" not in dense


SDPA_CASES = [
    g.make_scenario("decode-paged", H, "4q1s37", suffix=["u"], page_size=8),  # uniform, no mask needed
    g.make_scenario("spec-decode", H, "4q3s20", suffix=["u"], page_size=8),  # uniform, bottom-right mask
    g.make_scenario("prefill-dense", H, "2q30", suffix=["u"], kv_layout="varlen"),  # square causal
    g.make_scenario("mixed", H, "q9s30_q7s25_q8s28", suffix=["r"], page_size=8),  # ragged: padded with a mask
    g.make_scenario("sliding-window", H, "4q3s20", suffix=["w"], page_size=8, window=(4, 0)),
    g.make_scenario("prefill-varlen", H, "2q20", suffix=["bidir"], kv_layout="varlen", causal=False,
                    window=(3, 2)),
]


@pytest.mark.parametrize("s", SDPA_CASES, ids=[s.name for s in SDPA_CASES])
def test_sdpa_batching_matches_reference(s):
    from torch.nn.attention import SDPBackend
    inputs = make_inputs(s, "cpu", seed=4)
    ref = reference_outputs(inputs, with_naive=False)
    prep = bl.sdpa_prepared(s, bl.Dense(s, inputs), SDPBackend.MATH)
    ok, why = vllm_rule(prep.to_varlen(prep.fn()), ref.out, s.dtype)
    assert ok, why


def test_sdpa_not_comparable():
    from torch.nn.attention import SDPBackend
    s = g.make_scenario("mixed", H, "q64s64_8q1s64", suffix=["r"], page_size=8)
    with pytest.raises(bl.NotComparable, match="padded dense batch"):
        bl.sdpa_prepared(s, bl.Dense(s, make_inputs(s, "cpu", seed=5)), SDPBackend.MATH)
    s = g.make_scenario("sinks", H, "2q1s20", suffix=["s"], page_size=8, sinks=True)
    with pytest.raises(bl.NotComparable, match="sinks"):
        bl.sdpa_prepared(s, bl.Dense(s, make_inputs(s, "cpu", seed=5)), SDPBackend.MATH)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
@pytest.mark.parametrize("s", SDPA_CASES[3:] + [
    g.make_scenario("softcap", H, "q9s30_q7s25", suffix=["sc"], page_size=8, softcap=5.0)],
    ids=lambda s: s.name)
def test_flex_packing_matches_reference(s):
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    inputs = make_inputs(s, "cpu", seed=6)
    ref = reference_outputs(inputs, with_naive=False)
    prep = bl.flex_prepared(s, bl.Dense(s, inputs), flex.flex_attention, compile_mask=False)
    ok, why = vllm_rule(prep.to_varlen(prep.fn()), ref.out, s.dtype)
    assert ok, why
