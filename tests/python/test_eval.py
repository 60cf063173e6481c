"""The evaluator's arithmetic and writers: geomean and parity, spread, speedup, roofline counting, results.json
(results-schema.md fields), report.md, plots, git info, and the CLI's exits where it cannot run."""

import json

import pytest

from flashseek.eval import stats
from flashseek.eval.report import SCHEMA_FIELDS, git_info, results_document, write_json, write_report
from flashseek.eval.roofline import roofline_fields, scenario_work, visible_counts
from flashseek.testing import grid as g


def test_geomean_median_spread():
    assert stats.geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert stats.geomean([2.0, None, float("nan"), 8.0]) == pytest.approx(4.0)
    assert stats.geomean([]) is None
    assert stats.median([3, 1, 2]) == 2 and stats.median([4, 1, 2, 3]) == 2.5 and stats.median([]) is None
    assert stats.quantile([1, 2, 3, 4, 5], 0.25) == 2
    assert stats.spread([1, 2, 3, 4, 5]) == pytest.approx(1.0)  # (4 - 2) / 2
    assert stats.spread([5.0]) == 0.0
    assert stats.spread([10, 10, 10, 10, 500]) == 0.0  # one preempted sample does not count


def test_speedup():
    assert stats.speedup(10.0, {"cudnn": 12.0, "fa2": 15.0}) == pytest.approx(1.2)
    assert stats.speedup(10.0, {}) is None
    assert stats.speedup(None, {"cudnn": 1.0}) is None


def _rec(name, family, speedup, correct=True, **kw):
    r = {"name": name, "family": family, "correct": correct, "speedup": speedup, "baselines": {},
         "not_comparable": {}}
    r.update(kw)
    return r


def test_summarize_counts_parity_and_worst():
    recs = [_rec("a", "decode-paged", 2.0), _rec("b", "decode-paged", 0.5), _rec("c", "mixed", 1.0),
            _rec("d", "fp8", None, correct=False, error="unsupported: fp8 not supported yet", unsupported=True),
            _rec("e", "mixed", None, correct=False)]
    s = stats.summarize(recs)
    assert s["total"] == 5 and s["correct"] == 3 and s["errors"] == 1 and s["unsupported"] == 1
    assert s["geomean_speedup"] == pytest.approx(1.0) and s["at_parity"] == 2 and s["with_baseline"] == 3
    assert s["worst"] == {"name": "b", "speedup": 0.5}
    assert s["per_family"]["decode-paged"]["geomean_speedup"] == pytest.approx(1.0)
    assert s["per_family"]["mixed"]["total"] == 2 and s["per_family"]["mixed"]["at_parity"] == 1


def test_visible_counts_against_brute_force():
    for sq, sk, causal, window in [(5, 9, True, (-1, -1)), (9, 5, True, (-1, -1)), (6, 6, False, (1, 2)),
                                   (1, 100, True, (9, 0)), (4, 4, False, (-1, -1)), (3, 0, True, (-1, -1))]:
        left, right = window
        if causal:
            right = 0
        seen, tot = set(), 0
        for i in range(sq):
            for j in range(sk):
                d = i + sk - sq
                if (left < 0 or j >= d - left) and (right < 0 or j <= d + right):
                    tot += 1
                    seen.add(j)
        assert visible_counts(sq, sk, causal, window) == (tot, len(seen))


def test_scenario_work():
    s = g.make_scenario("decode-paged", "L8", "128q1s8k")
    w = scenario_work(s)
    assert w.kv_bytes == 128 * 8192 * 8 * (128 + 128) * 2
    assert w.flops == 4 * 32 * 128 * 8192 * 256 / 2
    p = g.make_scenario("prefill-dense", "L8", "q1k", kv_layout="varlen")
    assert scenario_work(p).flops == 4 * 32 * (1024 * 1025 // 2) * 256 / 2
    c = g.make_scenario("lse", "L8", "4q1s2k", entry="cascade", cascade_prefix=1024)
    assert scenario_work(c).kv_bytes == (4 * 2048 - 3 * 1024) * 8 * 256 * 2  # the prefix once
    f = roofline_fields(s, 100.0, hbm_GBps=4000.0, tflops=700.0)
    assert f["bound"] == "memory" and f["roofline_frac"] == pytest.approx(f["floor_us"] / 100.0)
    assert f["kv_GBps"] == pytest.approx(w.kv_bytes / 100e3)
    assert roofline_fields(s, None, 4000.0, 700.0)["roofline_frac"] is None


META = {"git_sha": "abc", "dirty": False, "gpu": "NVIDIA H200", "when": "2026-12-01T10:00:00Z",
        "command": "flashseek-eval --quick", "roofline": {"hbm_GBps": 4270.0, "bf16_TFLOPs": 680.0},
        "timing_method": "events"}


def _records():
    return [
        _rec("decode-paged/L8/128q1s8k/p16", "decode-paged", 1.1, us=100.0, us_spread=1.0, host_us=60.0,
             baselines={"cudnn": 110.0}, err=0.003, err_bound=0.006, roofline_frac=0.8, bound="memory",
             heads="L8", dtype="bf16", timed_output_matches_checked=True, baseline_spread={"cudnn": 1.0},
             baseline_host_us={"cudnn": 50.0}),
        _rec("prefill-dense/L8/q8k", "prefill-dense", 0.9, us=1000.0, us_spread=float("nan"), host_us=30.0,
             baselines={"cudnn": 900.0, "fa2": 1500.0}, not_comparable={"flex": "no sinks"}, roofline_frac=0.7,
             bound="compute", heads="L8", dtype="bf16"),
        _rec("fp8/L8/q8k/p16/descale-random", "fp8", None, correct=False, error="unsupported: fp8 not supported yet",
             unsupported=True),
        _rec("edge/L8/8q1s0/p16/total-k0", "edge", None, correct=False, reason="LSE at (0, 0): got inf",
             us=5.0, host_us=40.0),
    ]


def test_results_json_has_schema_fields(tmp_path):
    recs = _records()
    summary = stats.summarize(recs)
    doc = results_document(META, recs, summary)
    for key in ("git_sha", "dirty", "gpu", "when", "command", "roofline", "scenarios", "summary"):
        assert key in doc
    for sc in doc["scenarios"]:
        for f in SCHEMA_FIELDS:
            assert f in sc, f
    assert doc["scenarios"][1]["us_spread"] is None  # NaN is not JSON
    assert doc["scenarios"][2]["error"].startswith("unsupported")
    for key in ("total", "correct", "geomean_speedup", "at_parity", "worst"):
        assert key in doc["summary"]
    write_json(tmp_path / "results.json", doc)
    back = json.loads((tmp_path / "results.json").read_text())
    assert back["summary"]["total"] == 4 and back["scenarios"][0]["baselines"] == {"cudnn": 110.0}


def test_each_baseline_alone():
    recs = _records() + [_rec("edge/L8/q1s1k/p16/x", "edge", None, correct=False, us=10.0, baselines={"fa2": 5.0})]
    alone = stats.summarize(recs)["per_baseline"]
    # cudnn: 110 / 100 and 900 / 1000; fa2: 1500 / 1000 (the wrong edge scenario does not count)
    assert alone["cudnn"]["scenarios"] == 2 and alone["cudnn"]["at_parity"] == 1
    assert abs(alone["cudnn"]["geomean_speedup"] - (1.1 * 0.9) ** 0.5) < 1e-12
    assert alone["fa2"] == {"geomean_speedup": 1.5, "at_parity": 1, "scenarios": 1}


def test_report_markdown(tmp_path):
    recs = _records()
    summary = stats.summarize(recs)
    previous = {"git_sha": "old", "scenarios": [{"name": recs[0]["name"], "us": 150.0, "us_spread": 1.0}]}
    write_report(tmp_path / "report.md", META, recs, summary, {"fa3": "not importable"}, previous, ["speedup.png"])
    text = (tmp_path / "report.md").read_text()
    for part in ("## Summary", "against each baseline alone", "## Per family", "## Scenarios, worst first", "## Questions", "Gap triage",
                 "outside the kernel", "Coverage", "Measurement check", "fa3: not importable", "Against the previous"):
        assert part in text, part
    assert "FlexAttention was not among" not in text
    # A run whose --baselines left flex out says so instead of naming a flex subset.
    write_report(tmp_path / "report2.md", dict(META, flex_subset=["x"], baselines_run=["vllm", "cudnn"]), recs,
                 summary, {}, None, [])
    text2 = (tmp_path / "report2.md").read_text()
    assert "FlexAttention was not among this run's baselines" in text2 and "FlexAttention ran on" not in text2
    table = text[text.index("## Scenarios, worst first"):]
    # worst first: the failures, then the lowest speedup
    assert table.index("edge/L8/8q1s0") < table.index("prefill-dense/L8/q8k") < table.index("decode-paged/L8/128")


def test_plots(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    from flashseek.eval.plots import write_plots
    assert write_plots(tmp_path, _records()) == ["speedup.png", "roofline.png"]
    assert (tmp_path / "speedup.png").stat().st_size > 1000


def test_git_info_from_env_without_git(tmp_path, monkeypatch):
    monkeypatch.setenv("FLASHSEEK_GIT_SHA", "deadbeef")
    monkeypatch.setenv("FLASHSEEK_GIT_DIRTY", "0")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    info = git_info(tmp_path)
    assert info == {"git_sha": "deadbeef", "dirty": False}


def test_cli_exits(capsys):
    from flashseek.eval.cli import main
    assert main(["--family", "nosuch"]) == 2
    assert "valid families" in capsys.readouterr().err
    assert main(["--baselines", "cudnn,nosuch"]) == 2
    assert "valid baselines" in capsys.readouterr().err
    assert main(["--grid", "perf", "--family", "edge", "--list"]) == 0
    assert capsys.readouterr().out.count("\n") == 12


def test_cli_without_kernels_exits_2(capsys, tmp_path):
    import flashseek
    if flashseek.unavailable_reason() is None:
        pytest.skip("kernels are available here: this test covers machines without them")
    from flashseek.eval.cli import main
    assert main(["--quick", "--out", str(tmp_path)]) == 2
    assert "cannot run" in capsys.readouterr().err


def test_merge_refuses_mixed_commits_unless_allowed(tmp_path):
    from flashseek.eval import merge

    recs = _records()
    paths = []
    for i, (sha, part) in enumerate([("new", recs[:2]), ("old", recs[1:])]):
        doc = results_document(dict(META, git_sha=sha), part, stats.summarize(part))
        paths.append(tmp_path / f"in{i}.json")
        write_json(paths[-1], doc)
    assert merge.main(["--out", str(tmp_path / "refused")] + [str(p) for p in paths]) == 2
    assert merge.main(["--allow-commits", "--out", str(tmp_path / "out")] + [str(p) for p in paths]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["git_sha"] == "new"
    # the first input's record of a scenario wins; each record keeps the commit it was measured at
    shas = {sc["name"]: sc["git_sha"] for sc in doc["scenarios"]}
    assert shas == {recs[0]["name"]: "new", recs[1]["name"]: "new", recs[2]["name"]: "old", recs[3]["name"]: "old"}
    assert [(m["git_sha"], m["records"]) for m in doc["merged_commits"]] == [("new", 2), ("old", 2)]
    assert doc["summary"]["total"] == 4
    report = (tmp_path / "out" / "report.md").read_text()
    assert "merged from several commits" in report and "2 records at `old`" in report
