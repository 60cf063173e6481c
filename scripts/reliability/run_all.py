#!/usr/bin/env python3
"""Runs the reliability suite (issue 4) and writes one JSON report.

Each check is one pytest module, run in its own process (a CUDA error in one cannot take the others down) with
a junit report (built into pytest) for the counts and a metrics file the tests write for the numbers:
  hostile       tests/reliability/test_hostile_inputs.py   bad device data: contained, no writes past out
  graph_replay  tests/reliability/test_graph_replay.py     1000 CUDA-graph replays against eager calls
  determinism   tests/reliability/test_determinism.py      100 runs bitwise equal; batch and layout invariance
  fuzz          tests/reliability/test_fuzz.py             500 random calls against the reference
  unused_slots  tests/reliability/test_garbage_slots.py    garbage where the call must not look; NaN propagation
and with --sanitizers, scripts/reliability/run_sanitizers.sh (memcheck, racecheck, synccheck, initcheck).

    python3 scripts/reliability/run_all.py --out bench/results/reliability.json [--sanitizers]
    python3 scripts/reliability/run_all.py --checks none --sanitizers --sanitizer-tools memcheck,synccheck --out s.json
    python3 scripts/reliability/run_all.py --merge-from a.json b.json --out bench/results/reliability.json

The report: {"git_sha", "dirty", "gpu", "when", "command", "checks": {name: {..., "tests", "passed"}},
"passed", "failed_checks"}; "passed" only when every check present passed (a check whose tests all skipped has
not passed). Exit status 0 when passed. The end of the output is a short table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from reliability_report import (CHECKS, METRICS_ENV, SANITIZER_TOOLS, aggregate, build_report,  # noqa: E402
                                check_entry, parse_junit, parse_pytest_output, read_metrics, summary_table,
                                write_report)

CHECK_FILES = {
    "hostile": "tests/reliability/test_hostile_inputs.py",
    "graph_replay": "tests/reliability/test_graph_replay.py",
    "determinism": "tests/reliability/test_determinism.py",
    "fuzz": "tests/reliability/test_fuzz.py",
    "unused_slots": "tests/reliability/test_garbage_slots.py",
}


def _run(cmd: List[str], log_path: str, env: Dict[str, str], timeout: float) -> tuple:
    """(exit code or None on timeout, seconds, output text)."""
    t0 = time.time()
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
            rc: Optional[int] = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
            log.write(f"\n*** killed after {timeout:.0f} s\n")
    with open(log_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return rc, round(time.time() - t0, 1), text


def collect_check(check: str, junit_path: str, output: str, metrics_dir: str, exit_code: Optional[int],
                  seconds: Optional[float]) -> Dict[str, Any]:
    """One check's report entry from what its pytest process left: the junit report (or, if the process died
    before writing it, the counts in its output), and the metric lines its tests recorded."""
    error = None
    tests = None
    if os.path.exists(junit_path):
        try:
            with open(junit_path, encoding="utf-8") as f:
                tests = parse_junit(f.read())
        except Exception as exc:  # a truncated report
            error = f"unreadable junit report: {exc}"
    if tests is None:
        tests = parse_pytest_output(output)
        if exit_code is None:
            error = "timed out"
        elif exit_code not in (0, 1, 5):  # 5: nothing collected; others: interrupted, internal error, crash
            error = f"pytest exited with code {exit_code} without a junit report (crashed?)"
    elif exit_code is None:
        error = "timed out"
    elif exit_code not in (0, 1, 5):  # 5: nothing collected (every module skipped): the skip reason tells
        error = f"pytest exited with code {exit_code}"
    try:
        metrics = aggregate(check, read_metrics(metrics_dir, check))
    except Exception as exc:  # a malformed metrics line must not lose the check's pytest counts
        metrics = {}
        error = "; ".join(x for x in (error, f"could not aggregate the metrics: {type(exc).__name__}: {exc}") if x)
    return check_entry(check, tests, metrics, exit_code=exit_code, seconds=seconds, error=error)


def git_info() -> tuple:
    sha = os.environ.get("FLASHSEEK_GIT_SHA")
    dirty = None
    if not sha and os.path.exists(os.path.join(ROOT, ".git-sha")):
        with open(os.path.join(ROOT, ".git-sha"), encoding="utf-8") as f:
            stamp = f.read().split()  # "<sha> <dirty flag>" as scripts/stamp-sha.sh writes it
        sha = (stamp or [""])[0]
        if len(stamp) > 1:
            # The GPU machine's copy of the tree is not a checkout of the commit, so its git status says
            # nothing about the tree that was stamped.
            return sha, stamp[1] != "0"
    try:
        if not sha:
            sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                 timeout=20).stdout.strip()
        st = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=20)
        if st.returncode == 0:
            dirty = bool(st.stdout.strip())
    except Exception:
        pass
    return sha or "unknown", dirty


def gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30)
        names = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
        if out.returncode == 0 and names:
            return names[0]
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:
        pass
    return "none"


def merge_reports(paths: List[str]) -> Dict[str, Any]:
    """Several reports (e.g. one GPU call for the tests, one for the sanitizers) -> one, later checks winning."""
    checks: Dict[str, Any] = {}
    first: Dict[str, Any] = {}
    when, shas = [], set()
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rep = json.load(f)
        first = first or rep
        when.append(rep.get("when", ""))
        shas.add(rep.get("git_sha"))
        for name, entry in rep.get("checks", {}).items():
            if name == "sanitizers" and name in checks:
                checks[name].update(entry)
            else:
                checks[name] = entry
    extra = {"merged_from": paths}
    if len(shas) > 1:
        extra["warning"] = f"merged reports of different commits: {sorted(str(s) for s in shas)}"
    return build_report(checks, git_sha=first.get("git_sha", "unknown"), gpu=first.get("gpu", "unknown"),
                        when=max(when), command=" ".join(sys.argv), dirty=first.get("dirty"), extra=extra)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="flashseek reliability suite", epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "reliability.json"))
    ap.add_argument("--logs", default=None, help="folder for logs, junit and metrics (default: a new temporary "
                    "folder, printed)")
    ap.add_argument("--tar", default=None, help="also pack the logs folder into this .tar.gz")
    ap.add_argument("--checks", default=",".join(CHECKS), help=f"comma list of {', '.join(CHECKS)}, or none")
    ap.add_argument("--sanitizers", action="store_true", help="also run scripts/reliability/run_sanitizers.sh")
    ap.add_argument("--sanitizer-tools", default=",".join(SANITIZER_TOOLS), help="comma list")
    ap.add_argument("--sanitizer-timeout", type=int, default=280, help="seconds per tool")
    ap.add_argument("--sanitizer-quick", action="store_true", help="skip the larger workload scenarios")
    ap.add_argument("--sanitizer-only", default=None, help="regex on the workload's labels (one kernel's check)")
    ap.add_argument("--fuzz-cases", type=int, default=500)
    ap.add_argument("--fuzz-seed", type=int, default=None, help="default: random, recorded in the report")
    ap.add_argument("--seed", type=int, default=None, help="FLASHSEEK_RELIABILITY_SEED (default: random)")
    ap.add_argument("--replays", type=int, default=1000)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per check")
    ap.add_argument("--merge-from", nargs="+", default=None, help="merge these reports into --out and exit")
    args = ap.parse_args(argv)

    if args.merge_from:
        report = merge_reports(args.merge_from)
        write_report(args.out, report)
        print(summary_table(report))
        return 0 if report["passed"] else 1

    checks = [] if args.checks.strip() in ("", "none") else [c.strip() for c in args.checks.split(",")]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        ap.error(f"unknown checks {unknown}; valid: {', '.join(CHECKS)}")
    logs = os.path.abspath(args.logs or tempfile.mkdtemp(prefix="flashseek-reliability-"))
    metrics_dir = os.path.join(logs, "metrics")
    os.makedirs(metrics_dir, exist_ok=True)
    rng = random.SystemRandom()
    fuzz_seed = args.fuzz_seed if args.fuzz_seed is not None else rng.randrange(1, 1 << 30)
    seed = args.seed if args.seed is not None else rng.randrange(1, 1 << 30)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), HERE] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update({METRICS_ENV: metrics_dir, "FLASHSEEK_FUZZ_SEED": str(fuzz_seed),
                "FLASHSEEK_FUZZ_CASES": str(args.fuzz_cases), "FLASHSEEK_RELIABILITY_SEED": str(seed),
                "FLASHSEEK_GRAPH_REPLAYS": str(args.replays), "PYTHONUNBUFFERED": "1"})
    t_all = time.time()
    print(f"reliability: seeds FLASHSEEK_FUZZ_SEED={fuzz_seed} FLASHSEEK_RELIABILITY_SEED={seed}; logs in {logs}",
          flush=True)

    sha, dirty = git_info()
    gpu = gpu_name()
    entries: Dict[str, Any] = {}

    def report_now(partial: bool) -> Dict[str, Any]:
        """The report as it stands; written after every check, so a run cut short still leaves one."""
        extra = {"seeds": {"fuzz": fuzz_seed, "reliability": seed}, "seconds": round(time.time() - t_all, 1),
                 "logs": logs}
        if partial:
            extra["incomplete"] = f"still running; done: {', '.join(entries) or 'nothing'}"
        rep = build_report(entries, git_sha=sha, dirty=dirty, gpu=gpu,
                           when=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                           command=" ".join([os.path.basename(sys.executable)] + sys.argv), extra=extra)
        write_report(args.out, rep)
        return rep

    for check in checks:
        junit = os.path.join(logs, f"{check}.xml")
        for stale in (junit, os.path.join(metrics_dir, f"{check}.jsonl")):
            if os.path.exists(stale):
                os.remove(stale)
        cmd = [sys.executable, "-m", "pytest", CHECK_FILES[check], "-q", "-p", "no:cacheprovider", "-rfE",
               f"--junitxml={junit}"]
        rc, secs, text = _run(cmd, os.path.join(logs, f"{check}.log"), env, args.timeout)
        entries[check] = collect_check(check, junit, text, metrics_dir, rc, secs)
        if check == "fuzz" and entries[check].get("seed") is None:
            entries[check]["seed"] = fuzz_seed
        e = entries[check]
        print(f"  {check:<13} {'ok  ' if e['passed'] else 'FAIL'} in {secs:6.1f} s  "
              f"tests {e['tests']['passed']}/{e['tests']['tests']}  {e.get('reason', '')}".rstrip(), flush=True)
        report_now(partial=True)

    tools = [t for t in args.sanitizer_tools.replace(",", " ").split() if t]
    bad_tools = [t for t in tools if t not in SANITIZER_TOOLS]
    if bad_tools:
        ap.error(f"unknown sanitizer tools {bad_tools}; valid: {', '.join(SANITIZER_TOOLS)}")
    if args.sanitizers:
        san_dir = os.path.join(logs, "sanitizers")
        san_json = os.path.join(logs, "sanitizers.json")
        cmd = ["bash", os.path.join(HERE, "run_sanitizers.sh"), "--out", san_dir, "--json", san_json,
               "--tools", " ".join(tools), "--timeout", str(args.sanitizer_timeout)]
        if args.sanitizer_quick:
            cmd.append("--quick")
        if args.sanitizer_only:
            cmd += ["--only", args.sanitizer_only]
        n_tools = len(tools)
        rc, secs, text = _run(cmd, os.path.join(logs, "sanitizers.log"), env,
                              (args.sanitizer_timeout + 60) * n_tools + 60)
        if os.path.exists(san_json):
            with open(san_json, encoding="utf-8") as f:
                entries["sanitizers"] = json.load(f)
        else:
            entries["sanitizers"] = {t: {"scenarios": 0, "errors": None, "passed": False,
                                         "reason": f"run_sanitizers.sh wrote no summary (exit {rc})"}
                                     for t in tools}
        print(f"  sanitizers    in {secs:6.1f} s", flush=True)

    report = report_now(partial=False)
    if args.tar:
        os.makedirs(os.path.dirname(os.path.abspath(args.tar)), exist_ok=True)
        with tarfile.open(args.tar, "w:gz") as tar:
            tar.add(logs, arcname=os.path.basename(logs))
    print(summary_table(report))
    print(f"report: {args.out}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
