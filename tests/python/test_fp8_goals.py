"""Issue #5's fp8 speed goals in the evaluator (flashseek/eval/fp8_goals.py): which shapes each goal holds, the bf16
twin, the per-goal summary and the report section; and which baselines may run an fp8 scenario."""

import pytest

from flashseek.eval import fp8_goals, stats
from flashseek.eval.report import write_report
from flashseek.testing import grid as g


def _fp8(name):
    return next(s for s in g.select(g.grid("perf"), families=["fp8"]) if s.name == name)


def test_goal_of_the_fp8_family_shapes():
    assert fp8_goals.goal_of(_fp8("fp8/L8/128q1s8k/p16/hnd")) == "decode"
    assert fp8_goals.goal_of(_fp8("fp8/L70t8/q1s32k/p16/splits0")) == "decode"
    assert fp8_goals.goal_of(_fp8("fp8/L8/128q1s1k/p16/descale-stride0")) is None  # 1k keys
    assert fp8_goals.goal_of(_fp8("fp8/L8/q8k/p16/descale-random")) == "prefill"
    assert fp8_goals.goal_of(_fp8("fp8/G9/2q4k/p16/descale-random")) == "prefill"  # d256, 8k tokens
    assert fp8_goals.goal_of(_fp8("fp8/OSS/q8k/p16/descale-random")) is None  # d64
    bf16 = g.make_scenario("decode-paged", "L8", "128q1s8k", suffix=["p16"])
    assert fp8_goals.goal_of(bf16) is None


def test_twin_is_the_same_call_in_bf16():
    s = _fp8("fp8/L8/q8k/p16/descale-random")
    t = fp8_goals.twin_of(s)
    assert (t.dtype, t.kv_dtype, t.descale, t.has_fp8) == ("bf16", None, "none", False)
    assert (t.seqs, t.num_heads_q, t.num_heads_kv, t.head_dim, t.page_size, t.causal, t.window) == \
        (s.seqs, s.num_heads_q, s.num_heads_kv, s.head_dim, s.page_size, s.causal, s.window)
    assert t.name != s.name


def _rec(name, goal, us, twin_us):
    return {"name": name, "family": "fp8", "correct": True, "speedup": None, "baselines": {}, "not_comparable": {},
            "us": us, "bf16_twin_us": twin_us, "fp8_goal": goal}


def test_summary_and_report_section(tmp_path):
    recs = [_rec("fp8/a", "decode", 50.0, 100.0),     # 0.50: met
            _rec("fp8/b", "decode", 140.0, 100.0),    # 1.40: missed, the worst
            _rec("fp8/c", "prefill", 600.0, 1000.0),  # 1.67x the rate: met
            _rec("fp8/d", "prefill", 700.0, 1000.0),  # 1.43x: missed
            _rec("fp8/e", None, 80.0, 100.0)]
    summary = stats.summarize(recs)
    goals = summary["fp8_goals"]
    assert goals["decode"] == {"scenarios": 2, "met": 1, "worst_time_ratio": pytest.approx(1.4), "worst": "fp8/b"}
    assert goals["prefill"]["scenarios"] == 2 and goals["prefill"]["met"] == 1
    assert goals["prefill"]["worst"] == "fp8/d"
    meta = {"git_sha": "x", "dirty": False, "gpu": "H200", "when": "now", "command": "c",
            "roofline": {"hbm_GBps": 4000, "bf16_TFLOPs": 700}, "timing_method": "events"}
    write_report(tmp_path / "r.md", meta, recs, summary, {})
    text = (tmp_path / "r.md").read_text()
    section = text[text.index("## fp8 against bf16"):]
    assert "| fp8/b | 140 | 100 | 1.40 | decode | no |" in section
    assert "| fp8/a | 50 | 100 | 0.50 | decode | yes |" in section
    assert "| fp8/c | 600 | 1000 | 0.60 | prefill | yes |" in section
    assert "| fp8/e | 80 | 100 | 0.80 | – | – |" in section


def test_no_twins_no_section():
    recs = [{"name": "x", "family": "decode-paged", "correct": True, "speedup": 1.0, "us": 1.0}]
    assert "fp8_goals" not in stats.summarize(recs)
    assert fp8_goals.report_lines(recs) == []


def test_fp8_baselines():
    bl = pytest.importorskip("flashseek.eval.baselines")  # imports torch
    all_fp8 = _fp8("fp8/L8/q8k/p16/descale-random")
    bl._common_checks(all_fp8, None, "vllm")  # vLLM's FA3 takes e4m3 q, k and v
    bl._common_checks(all_fp8, None)
    with pytest.raises(bl.NotComparable, match="bf16/fp16 only"):
        bl._common_checks(all_fp8, None, "cudnn")
    mixed = all_fp8.with_(name="mixed", dtype="bf16", kv_dtype="e4m3")
    with pytest.raises(bl.NotComparable, match="16-bit q"):
        bl._common_checks(mixed, None, "vllm")
