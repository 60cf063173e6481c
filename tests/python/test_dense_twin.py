"""The decodes' dense-copy diagnostic (flashseek/eval/dense_twin.py): which scenarios get a twin, what the twin is,
and the summary and report lines from hand-made records whose ratios are known. CPU only."""

import math

from flashseek.eval import dense_twin, stats
from flashseek.testing import grid as g


def _rec(name, us, dense_us, cudnn=None, correct=True):
    return {"name": name, "family": name.split("/")[0], "correct": correct, "us": us, "dense_twin_us": dense_us,
            "speedup": None, "baselines": {} if cudnn is None else {"cudnn": cudnn}, "not_comparable": {}}


def test_paged_bf16_decodes_get_a_dense_twin_of_the_same_call():
    s = g.make_scenario("decode-paged", "L8", "128q1s8k")
    assert dense_twin.wants_dense_twin(s)
    t = dense_twin.dense_twin_of(s)
    assert t.kv_layout == "varlen" and t.name == s.name + "#dense"
    assert (t.q_lens, t.k_lens, t.heads, t.causal, t.num_splits) == (s.q_lens, s.k_lens, s.heads, s.causal,
                                                                       s.num_splits)
    assert not dense_twin.wants_dense_twin(t)  # already dense
    assert not dense_twin.wants_dense_twin(g.make_scenario("prefill-dense", "L8", "q1k", kv_layout="varlen"))
    assert not dense_twin.wants_dense_twin(g.make_scenario("decode-paged", "L8", "8q1s1k", dtype="e4m3"))
    assert not dense_twin.wants_dense_twin(g.make_scenario("mixed", "L8", "q1k_64q1s1k"))


def test_summary_separates_the_layout_from_the_kernel():
    recs = [_rec("decode-paged/L8/a/p16", 110.0, 100.0, cudnn=95.0),   # paged/dense 1.1, dense/cudnn 100/95
            _rec("decode-paged/L8/b/p16", 90.0, 100.0),                 # 0.9, no cudnn
            _rec("decode-paged/L8/c/p16", 50.0, 40.0, correct=False)]   # wrong: left out
    got = dense_twin.summarize_dense(recs)
    assert got["scenarios"] == 2 and got["with_cudnn"] == 1
    assert math.isclose(got["paged_over_dense"], math.sqrt(1.1 * 0.9))
    assert math.isclose(got["dense_over_cudnn"], 100.0 / 95.0)
    assert stats.summarize(recs)["dense_twin"] == got
    lines = dense_twin.report_lines(recs)
    assert lines[0].startswith("## Decodes on a dense copy")
    assert any(line.startswith("| decode-paged/L8/a/p16 | 110 | 100 | 1.100 | 95.0 | 1.053 |") for line in lines)


def test_no_twin_no_section():
    recs = [_rec("decode-paged/L8/a/p16", 110.0, None)]
    assert dense_twin.summarize_dense(recs) is None
    assert dense_twin.report_lines(recs) == []
    assert "dense_twin" not in stats.summarize(recs)
