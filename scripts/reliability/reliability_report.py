#!/usr/bin/env python3
"""The reliability suite's bookkeeping, in plain Python (no torch, no GPU), so that CI can test it.

  record(check, **fields)        a GPU test appends one JSON line of metrics for `check` to
                                 $FLASHSEEK_RELIABILITY_METRICS/<check>.jsonl (nothing when the variable is unset)
  read_metrics(dir, check)       those lines back
  parse_sanitizer_log(text)      one compute-sanitizer log -> errors, hazards, findings attributed to scenarios
  sanitizer_summary(dir)         every <tool>.log of run_sanitizers.sh -> {tool: {...}}
  parse_junit(xml) / parse_pytest_output(text)   pytest's counts (junit XML is built into pytest: no plugin)
  aggregate(check, lines)        a check's metric lines -> the numbers the report shows
  check_entry(...) / build_report(...) / write_report(...)   bench/results/reliability.json

CLI (run_sanitizers.sh uses it):  reliability_report.py sanitizers --dir LOGDIR --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from typing import Any, Dict, Iterable, List, Optional

METRICS_ENV = "FLASHSEEK_RELIABILITY_METRICS"
CHECKS = ("hostile", "graph_replay", "determinism", "fuzz", "unused_slots")
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
SCENARIO_MARK = "RELIABILITY-SCENARIO"  # the workload prints "<mark> <label>" before each scenario
WORKLOAD_MARK = "RELIABILITY-WORKLOAD"  # and "<mark> scenarios=N calls=N failed=N skipped=N" at the end
MAX_LISTED = 20  # findings / failures kept per check (the logs hold the rest)


# ---- metrics from the GPU tests ---------------------------------------------------------------------------------

def record(check: str, **fields: Any) -> None:
    """Append one metrics line for `check` (a test's case, or a session summary). No-op unless the runner set
    FLASHSEEK_RELIABILITY_METRICS to a directory."""
    directory = os.environ.get(METRICS_ENV)
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{check}.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(fields, sort_keys=True, default=str) + "\n")


def read_metrics(directory: str, check: str) -> List[Dict[str, Any]]:
    path = os.path.join(directory, f"{check}.jsonl")
    if not os.path.exists(path):
        return []
    lines = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.strip()
            if raw:
                try:
                    lines.append(json.loads(raw))
                except json.JSONDecodeError:  # a line cut by a crash: skip it, the test counts still tell
                    continue
    return lines


def _count(lines: Iterable[Dict], kind: str, pred=lambda d: True) -> int:
    return sum(1 for d in lines if d.get("kind") == kind and pred(d))


def _listed(lines: Iterable[Dict], kind: str, pred, keys: Iterable[str]) -> List[Dict]:
    out = []
    for d in lines:
        if d.get("kind") == kind and pred(d):
            out.append({k: d[k] for k in keys if k in d})
            if len(out) >= MAX_LISTED:
                break
    return out


def aggregate(check: str, lines: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The numbers one check reports, from its metric lines (see each test module for the kinds it writes)."""
    bad = lambda d: not d.get("ok", False)  # noqa: E731
    if check == "hostile":
        return {
            "cases": _count(lines, "case"),
            "failures": _count(lines, "case", bad),
            "crashes": _count(lines, "case", lambda d: d.get("crashed", False)),
            "guard_violations": _count(lines, "case", lambda d: not d.get("guards_ok", True)),
            "inputs_modified": _count(lines, "case", lambda d: not d.get("inputs_unchanged", True)),
            "followup_failures": _count(lines, "case", lambda d: not d.get("followup_ok", True)),
            "checker_cases": _count(lines, "checker"),
            "checker_misses": _count(lines, "checker", bad),
            "failed_cases": _listed(lines, "case", bad, ("name", "reason")),
        }
    if check == "graph_replay":
        runs = [d for d in lines if d.get("kind") == "graph"]
        main = [d for d in runs if d.get("main")]
        return {
            "replays": sum(d.get("replays", 0) for d in main),
            "mismatches": sum(d.get("mismatches", 0) for d in main),
            "bitwise_mismatches": sum(d.get("bitwise_mismatches", 0) for d in main),
            "reference_checks": sum(d.get("reference_checks", 0) for d in main),
            "reference_failures": sum(d.get("reference_failures", 0) for d in main),
            "configs": {d.get("name", "?"): {k: d[k] for k in ("replays", "mismatches", "bitwise_mismatches",
                                                                "reference_checks", "reference_failures",
                                                                "planned_splits", "max_abs_diff") if k in d}
                        for d in runs},
        }
    if check == "determinism":
        rep = [d for d in lines if d.get("kind") == "repeat"]
        inv = [d for d in lines if d.get("kind") == "invariance"]
        lay = [d for d in lines if d.get("kind") == "layout"]
        return {
            "repeat_cases": len(rep),
            "runs_per_case": max([d.get("runs", 0) for d in rep], default=0),
            "nondeterministic": sum(1 for d in rep if bad(d)),
            "forced_split_cases": sum(1 for d in rep if (d.get("planned_splits") or 1) > 1),
            "batch_invariance": {"targets": len(inv), "batches": sum(d.get("batches", 0) for d in inv),
                                 "mismatches": sum(d.get("mismatches", 0) for d in inv)},
            "layout_invariance": {"targets": len(lay), "layouts": sum(d.get("layouts", 0) for d in lay),
                                  "mismatches": sum(d.get("mismatches", 0) for d in lay)},
            "failed_cases": [{k: d[k] for k in ("kind", "name", "reason") if k in d}
                             for d in rep + inv + lay if bad(d)][:MAX_LISTED],
        }
    if check == "fuzz":
        cases = [d for d in lines if d.get("kind") == "case"]
        seeds = [d.get("seed") for d in lines if d.get("kind") == "session"]
        return {
            "cases": len(cases),
            "failures": sum(1 for d in cases if bad(d)),
            "seed": seeds[-1] if seeds else None,
            "features": _feature_counts(cases),
            "failed_cases": _listed(lines, "case", bad, ("case_seed", "name", "reason", "replay")),
        }
    if check == "unused_slots":
        return {
            "cases": _count(lines, "garbage"),
            "mismatches": _count(lines, "garbage", bad),
            "nan_propagation": {"cases": _count(lines, "nan"), "failures": _count(lines, "nan", bad)},
            "failed_cases": [{k: d[k] for k in ("kind", "name", "reason") if k in d}
                             for d in lines if bad(d)][:MAX_LISTED],
        }
    raise ValueError(f"aggregate: unknown check {check!r}; valid: {', '.join(CHECKS)}")


def _feature_counts(cases: List[Dict]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for d in cases:
        for f in d.get("features", []):
            counts[f] = counts.get(f, 0) + 1
    return dict(sorted(counts.items()))


# ---- pytest results ---------------------------------------------------------------------------------------------

def parse_junit(xml_text: str) -> Dict[str, Any]:
    """pytest's --junitxml report -> counts and the failing tests with the first line of their message."""
    root = ET.fromstring(xml_text)
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    res = {"tests": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "seconds": 0.0, "failures": [],
           "skip_reasons": []}
    for suite in suites:
        res["seconds"] += float(suite.get("time", 0) or 0)
        for case in suite.iter("testcase"):
            res["tests"] += 1
            name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = {"failure": "failed", "error": "errors", "skipped": "skipped"}[child.tag]
                    msg = (child.get("message") or "").strip()
                    if not msg or msg == "collection skipped":  # a module-level skip: the reason is in the text
                        text = (child.text or "").strip()
                        m = re.search(r"Skipped: (.*?)['\"]\)\s*$", text, re.S)
                        msg = m.group(1) if m else (text or msg)
                    lines = msg.splitlines()
                    first = lines[0][:400] if lines else ""
                    if outcome == "skipped":
                        if first and first not in res["skip_reasons"] and len(res["skip_reasons"]) < 5:
                            res["skip_reasons"].append(first)
                    elif len(res["failures"]) < MAX_LISTED:
                        res["failures"].append({"test": name, "outcome": outcome, "message": first})
                    break
            res[outcome] += 1
    res["seconds"] = round(res["seconds"], 2)
    return res


_SUMMARY_WORDS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "errors",
                  "errors": "errors", "xfailed": "skipped", "xpassed": "passed", "deselected": None}


def parse_pytest_output(text: str) -> Dict[str, Any]:
    """The counts of pytest's last summary line ("3 passed, 1 failed, 2 skipped in 4.5s"); a fallback for when
    the junit report is missing (the process died)."""
    res = {"tests": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "seconds": 0.0, "failures": [],
           "skip_reasons": []}
    lines = [ln for ln in text.splitlines() if re.search(r"\d+ (passed|failed|skipped|errors?)\b", ln)]
    if not lines:
        return res
    last = lines[-1]
    for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)\b", last):
        key = _SUMMARY_WORDS[word]
        if key:
            res[key] += int(n)
    m = re.search(r" in ([\d.]+)s", last)
    if m:
        res["seconds"] = float(m.group(1))
    res["tests"] = res["passed"] + res["failed"] + res["errors"] + res["skipped"]
    for ln in text.splitlines():
        m = re.match(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", ln)
        if m and len(res["failures"]) < MAX_LISTED:
            res["failures"].append({"test": m.group(2), "outcome": "failed" if m.group(1) == "FAILED" else "errors",
                                    "message": (m.group(3) or "")[:400]})
    return res


# ---- compute-sanitizer logs ---------------------------------------------------------------------------------------

_HEADER = re.compile(r"^=+ (\S.*)$")  # "========= Invalid __global__ read ..." (continuations are indented)
_CONTINUATION = re.compile(r"^=+\s{2,}(\S.*)$")
_NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Saved host backtrace",
                 "Host Frame", "Device Frame", "Target application returned an error",
                 "Error: process didn't terminate successfully")
_UNAVAILABLE = ("compute-sanitizer not found", "Device not supported", "Unable to find injection library",
                "no CUDA-capable device", "Sanitizer is not supported")


def parse_sanitizer_log(text: str) -> Dict[str, Any]:
    """One compute-sanitizer run (its output and the workload's, interleaved) -> counts and findings.

    errors: the sum of "ERROR SUMMARY: N errors" lines (for racecheck, the errors of "RACECHECK SUMMARY" when it
    prints no ERROR SUMMARY); None when no summary was printed (the run died or timed out). Findings are the
    report headers, attributed to the scenario the workload announced last, and split into our kernels
    ("flashseek" in the kernel frame), API errors ("Program hit ...") and the rest."""
    res: Dict[str, Any] = {"errors": None, "hazards": None, "race_errors": None, "race_warnings": None,
                           "scenarios_started": 0, "scenarios": None, "calls": None, "workload_failed": None,
                           "workload_skipped": None, "api_errors": 0, "flashseek_findings": 0, "other_findings": 0,
                           "findings": [], "unavailable": None}
    summaries = []
    scenario = None
    current = None  # the finding whose continuation lines are being read
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(SCENARIO_MARK):
            scenario = stripped[len(SCENARIO_MARK):].strip()
            res["scenarios_started"] += 1
            current = None
            continue
        if stripped.startswith(WORKLOAD_MARK):
            for key, val in re.findall(r"(\w+)=(\d+)", stripped):
                if key in ("scenarios", "calls", "failed", "skipped"):
                    res["workload_" + key if key in ("failed", "skipped") else key] = int(val)
            continue
        for marker in _UNAVAILABLE:
            if marker in line and res["unavailable"] is None:
                res["unavailable"] = stripped[:300]
        m = re.search(r"ERROR SUMMARY: (\d+) errors?", line)
        if m:
            summaries.append(int(m.group(1)))
            current = None
            continue
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", line)
        if m:
            res["hazards"], res["race_errors"], res["race_warnings"] = (int(g) for g in m.groups())
            current = None
            continue
        m = _CONTINUATION.match(line)
        if m and current is not None:
            body = m.group(1)
            if body.startswith("at ") and current.get("kernel") is None:
                current["kernel"] = body[3:200]
                if not current["api"] and not current.get("counted"):
                    res["flashseek_findings" if "flashseek" in body else "other_findings"] += 1
                    current["counted"] = True
            continue
        m = _HEADER.match(line)
        if m:
            head = m.group(1)
            if any(head.startswith(x) for x in _NOT_FINDINGS):
                current = None
                continue
            api = head.startswith("Program hit")
            current = {"scenario": scenario, "message": head[:300], "kernel": None, "api": api}
            if api:
                res["api_errors"] += 1
            elif "flashseek" in head:  # racecheck names the kernel in the header line
                res["flashseek_findings"] += 1
                current["counted"] = True
            if len(res["findings"]) < MAX_LISTED:
                res["findings"].append(current)
    # findings with no kernel frame (e.g. a race's second location only) count as "other"
    for f in res["findings"]:
        if not f["api"] and not f.get("counted") and f["kernel"] is None:
            res["other_findings"] += 1
        f.pop("counted", None)
    if summaries:
        res["errors"] = sum(summaries)
    elif res["race_errors"] is not None:
        res["errors"] = res["race_errors"]
    return res


def sanitizer_tool_entry(tool: str, log_text: Optional[str], exit_code: Optional[int],
                         seconds: Optional[float], version: Optional[str] = None) -> Dict[str, Any]:
    """One tool's entry in the report: {"scenarios", "errors", "passed", ...}. Passing needs a summary, zero
    device-side errors (API errors that torch's own calls raise are listed, not failed on) and a workload that
    ran every scenario without failing."""
    entry: Dict[str, Any] = {"exit_code": exit_code, "seconds": seconds}
    if version:
        entry["version"] = version
    if log_text is None:
        entry.update(scenarios=0, errors=None, passed=False, reason="no log (the tool did not run)")
        return entry
    p = parse_sanitizer_log(log_text)
    entry.update({
        "scenarios": p["scenarios"] if p["scenarios"] is not None else p["scenarios_started"],
        "errors": p["errors"],
        "api_errors": p["api_errors"],
        "device_errors": None if p["errors"] is None else max(0, p["errors"] - p["api_errors"]),
        "flashseek_findings": p["flashseek_findings"],
        "other_findings": p["other_findings"],
        "findings": p["findings"],
    })
    if tool == "racecheck" or p["hazards"] is not None:
        entry.update(hazards=p["hazards"], race_errors=p["race_errors"], race_warnings=p["race_warnings"])
    reasons = []
    if p["unavailable"]:
        reasons.append(f"sanitizer unavailable here: {p['unavailable']}")
    if p["errors"] is None:
        reasons.append("no ERROR SUMMARY in the log (the tool timed out, died or could not start)")
    elif entry["device_errors"]:
        reasons.append(f"{entry['device_errors']} device-side errors ({p['flashseek_findings']} in flashseek "
                       f"kernels among the listed findings)")
    if p["scenarios"] is None:
        reasons.append(f"the workload did not finish ({p['scenarios_started']} scenarios started)")
    elif p["workload_failed"]:
        reasons.append(f"{p['workload_failed']} workload scenarios raised")
    if exit_code not in (None, 0) and not reasons:
        reasons.append(f"exit code {exit_code}")
    entry["passed"] = not reasons
    if reasons:
        entry["reason"] = "; ".join(reasons)
    return entry


def sanitizer_summary(directory: str, tools: Iterable[str] = SANITIZER_TOOLS) -> Dict[str, Any]:
    """run_sanitizers.sh's logs -> {tool: entry}. status.txt lines: '<tool> <exit code> <seconds>'."""
    status: Dict[str, tuple] = {}
    path = os.path.join(directory, "status.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    status[parts[0]] = (int(parts[1]), float(parts[2]))
    version = None
    vpath = os.path.join(directory, "version.txt")
    if os.path.exists(vpath):
        with open(vpath, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        version = lines[-1] if lines else None
    out = {}
    for tool in tools:
        log = os.path.join(directory, f"{tool}.log")
        text = None
        if os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as f:
                text = f.read()
        rc, secs = status.get(tool, (None, None))
        out[tool] = sanitizer_tool_entry(tool, text, rc, secs, version)
        out[tool]["log"] = log
    return out


# ---- the report ---------------------------------------------------------------------------------------------------

def check_entry(check: str, tests: Optional[Dict[str, Any]], metrics: Dict[str, Any],
                exit_code: Optional[int] = None, seconds: Optional[float] = None,
                error: Optional[str] = None) -> Dict[str, Any]:
    """One check's entry: its metrics, pytest's counts, and passed. A check passes when pytest ran at least one
    test, none failed or errored, and its own numbers are clean; one whose tests all skipped does not pass (it
    says why)."""
    entry: Dict[str, Any] = dict(metrics)
    entry["tests"] = tests
    entry["exit_code"] = exit_code
    entry["seconds"] = seconds
    reasons = []
    if error:
        reasons.append(error)
    if tests is None:
        reasons.append("no test results")
    else:
        if tests.get("failed") or tests.get("errors"):
            reasons.append(f"{tests.get('failed', 0)} failed, {tests.get('errors', 0)} errors")
        ran = tests.get("passed", 0) + tests.get("failed", 0) + tests.get("errors", 0)
        if ran == 0:
            why = (tests.get("skip_reasons") or ["nothing ran"])[0]
            reasons.append(f"no test ran ({why})")
    for key in ("crashes", "guard_violations", "inputs_modified", "followup_failures", "checker_misses",
                "mismatches", "reference_failures", "nondeterministic", "failures"):
        if metrics.get(key):
            reasons.append(f"{key}={metrics[key]}")
    for key in ("batch_invariance", "layout_invariance", "nan_propagation"):
        sub = metrics.get(key) or {}
        if sub.get("mismatches") or sub.get("failures"):
            reasons.append(f"{key}: {sub}")
    entry["passed"] = not reasons
    if reasons:
        entry["reason"] = "; ".join(reasons)
    return entry


def build_report(checks: Dict[str, Dict[str, Any]], *, git_sha: str, gpu: str, when: str, command: str = "",
                 dirty: Optional[bool] = None, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """{"git_sha", "gpu", "when", "checks", "passed"}: passed only when every check present passed (the
    sanitizers entry, {tool: entry}, passes when every tool's entry does)."""
    report: Dict[str, Any] = {"git_sha": git_sha, "dirty": dirty, "gpu": gpu, "when": when, "command": command,
                              "checks": checks}
    if extra:
        report.update(extra)
    failed = []
    for name, entry in checks.items():
        if name == "sanitizers":
            bad = [t for t, e in entry.items() if not e.get("passed")]
            if bad or not entry:
                failed.append(f"sanitizers ({', '.join(bad) or 'none ran'})")
        elif not entry.get("passed"):
            failed.append(name)
    report["passed"] = bool(checks) and not failed
    report["failed_checks"] = failed
    return report


def _json_safe(x: Any) -> Any:
    """Non-finite floats as strings ("inf", "nan"): the report stays strict JSON."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return str(x)
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def write_report(path: str, report: Dict[str, Any]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(_json_safe(report), f, indent=2, sort_keys=False, default=str, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def summary_table(report: Dict[str, Any]) -> str:
    """A short table for the end of a run's output."""
    rows = [f"reliability: {'PASSED' if report.get('passed') else 'FAILED'}  ({report.get('gpu')}, "
            f"{str(report.get('git_sha'))[:12]})"]
    for name, e in report.get("checks", {}).items():
        if name == "sanitizers":
            for tool, t in e.items():
                rows.append(f"  sanitizer {tool:<10} {'ok  ' if t.get('passed') else 'FAIL'} scenarios="
                            f"{t.get('scenarios')} errors={t.get('errors')} {t.get('reason', '')}".rstrip())
            continue
        nums = {k: e[k] for k in ("cases", "replays", "mismatches", "failures", "crashes", "seed",
                                  "repeat_cases", "nondeterministic") if k in e}
        tests = e.get("tests") or {}
        rows.append(f"  {name:<20} {'ok  ' if e.get('passed') else 'FAIL'} tests {tests.get('passed', 0)}/"
                    f"{tests.get('tests', 0)} {json.dumps(nums)} {e.get('reason', '')}".rstrip())
    return "\n".join(rows)


def _main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sanitizers", help="summarize run_sanitizers.sh's logs as JSON")
    s.add_argument("--dir", required=True)
    s.add_argument("--json", required=True)
    s.add_argument("--tools", default=" ".join(SANITIZER_TOOLS))
    args = ap.parse_args(argv)
    summary = sanitizer_summary(args.dir, args.tools.split())
    write_report(args.json, summary)
    for tool, e in summary.items():
        print(f"{tool:<10} {'ok  ' if e['passed'] else 'FAIL'} scenarios={e.get('scenarios')} "
              f"errors={e.get('errors')} {e.get('reason', '')}".rstrip())
    return 0 if all(e["passed"] for e in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(_main())
