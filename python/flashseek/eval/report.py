"""results.json (results-schema.md: its fields are kept, others added) and report.md, whose last section answers
the data part of the question bank (/work/shared/questions.md)."""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from flashseek.eval import targets
from flashseek.eval.dense_twin import report_lines as dense_report_lines
from flashseek.eval.fp8_goals import report_lines as fp8_report_lines
from flashseek.eval.stats import geomean, median

SCHEMA_FIELDS = ("name", "family", "correct", "err", "err_bound", "us", "us_spread", "host_us", "baselines",
                 "not_comparable", "speedup", "roofline_frac")


def git_info(start: Optional[Path] = None) -> Dict[str, object]:
    """git_sha and dirty of the checkout holding this package (or FLASHSEEK_GIT_SHA / FLASHSEEK_GIT_DIRTY where
    there is no git, e.g. a copied tree on the GPU machine)."""
    start = start or Path(__file__).resolve().parent
    if os.environ.get("FLASHSEEK_GIT_SHA"):  # stamped by the caller: a copied tree's .git may be stale
        dirty_env = os.environ.get("FLASHSEEK_GIT_DIRTY", "1")
        return {"git_sha": os.environ["FLASHSEEK_GIT_SHA"],
                "dirty": dirty_env.strip().lower() in ("1", "true", "yes")}
    # scripts/stamp-sha.sh writes "<sha> <dirty>" into .git-sha at the repository root before a GPU call.
    for folder in [start, *start.parents]:
        stamp = folder / ".git-sha"
        if stamp.is_file():
            parts = stamp.read_text().split()
            if parts:
                return {"git_sha": parts[0], "dirty": len(parts) < 2 or parts[1] not in ("0", "false")}
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=start, capture_output=True, text=True, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=start, capture_output=True, text=True,
                                timeout=20)
        if sha.returncode == 0 and status.returncode == 0:
            return {"git_sha": sha.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        pass
    sha = os.environ.get("FLASHSEEK_GIT_SHA", "unknown")
    dirty_env = os.environ.get("FLASHSEEK_GIT_DIRTY")
    dirty = True if dirty_env is None else dirty_env.strip().lower() in ("1", "true", "yes")
    return {"git_sha": sha, "dirty": dirty}


def _clean(x):
    """JSON cannot hold NaN or Inf: write null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def results_document(meta: dict, records: List[dict], summary: dict) -> dict:
    """The results.json document: meta (git_sha, dirty, gpu, when, command, roofline, ...), scenarios, summary.
    Every record carries every schema field (null where it has no value)."""
    scenarios = []
    for r in records:
        rec = {k: r.get(k) for k in SCHEMA_FIELDS}
        rec["baselines"] = rec["baselines"] or {}
        rec.update({k: v for k, v in r.items() if k not in rec})
        scenarios.append(rec)
    doc = dict(meta)
    doc["scenarios"] = scenarios
    doc["summary"] = dict(summary, targets=targets.summary_block(records, summary, meta.get("trivial_op_host_us")))
    return _clean(doc)


def write_json(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


# ---- report.md ------------------------------------------------------------------------------------------------

def _f(x, fmt="{:.3g}", none="–"):
    return none if x is None else fmt.format(x)


def _sort_key(r: dict):
    """Worst first: failures and errors, then by speedup ascending, then scenarios without a baseline."""
    if not r.get("correct"):
        return (0, 0.0, r["name"])
    if r.get("speedup") is None:
        return (2, 0.0, r["name"])
    return (1, r["speedup"], r["name"])


def _best_baseline(r: dict) -> str:
    b = r.get("baselines") or {}
    if not b:
        return "–"
    name = min(b, key=b.get)
    return f"{name} {b[name]:.4g}"


def _features(r: dict) -> List[str]:
    """Coarse features of a scenario for 'what do the worst share': from its name and fields."""
    parts = r["name"].split("/")
    feats = [f"family={r['family']}", f"heads={r.get('heads')}"]
    feats += [f"feature={p}" for p in parts[3:] if p]
    feats.append("decode-like" if r.get("bound") == "memory" else "prefill-like")
    return feats


def _scenario_table(records: Sequence[dict]) -> List[str]:
    lines = ["| scenario | ok | us (± spread) | host us | best baseline us | speedup | roofline | GB/s K/V "
             "| TFLOP/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(records, key=_sort_key):
        ok = "yes" if r.get("correct") else ("ERROR" if r.get("error") else "FAIL")
        us = f"{r['us']:.4g} ± {r.get('us_spread') or 0:.2g}" if r.get("us") is not None else "–"
        lines.append(f"| {r['name']} | {ok} | {us} | {_f(r.get('host_us'), '{:.3g}')} | {_best_baseline(r)} | "
                     f"{_f(r.get('speedup'), '{:.3f}')} | {_f(r.get('roofline_frac'), '{:.2f}')} | "
                     f"{_f(r.get('kv_GBps'), '{:.0f}')} | {_f(r.get('tflops'), '{:.0f}')} |")
    return lines


def _family_table(summary: dict) -> List[str]:
    lines = ["| family | scenarios | correct | errors | with baseline | geomean speedup | at parity | "
             "median roofline frac |", "|---|---|---|---|---|---|---|---|"]
    for fam, f in sorted(summary["per_family"].items()):
        lines.append(f"| {fam} | {f['total']} | {f['correct']} | {f['errors']} | {f['with_baseline']} | "
                     f"{_f(f['geomean_speedup'], '{:.3f}')} | {f['at_parity']} | "
                     f"{_f(f['median_roofline_frac'], '{:.2f}')} |")
    return lines


def _questions(records: Sequence[dict], summary: dict, meta: dict, previous: Optional[dict]) -> List[str]:
    out = ["## Questions (data answers to /work/shared/questions.md)", ""]
    # Measurement check
    out += ["### Measurement check",
            f"- Commit measured: `{meta.get('git_sha')}`, dirty: {meta.get('dirty')}; GPU: {meta.get('gpu')}; "
            f"when: {meta.get('when')}. Every number in this file comes from this one run.",
            f"- Ceilings measured in this run: HBM read {meta['roofline']['hbm_GBps']} GB/s, bf16 "
            f"{meta['roofline']['bf16_TFLOPs']} TFLOP/s."]
    timed = [r for r in records if "timed_output_matches_checked" in r]
    mismatched = [r["name"] for r in timed if not r["timed_output_matches_checked"]]
    out.append(f"- Is the output timed the output checked? Timing reuses the checked inputs; the last timed output "
               f"was bitwise equal to the checked one in {len(timed) - len(mismatched)} of {len(timed)} scenarios"
               + (f" (differs: {', '.join(mismatched[:10])})." if mismatched else "."))
    # spread
    within, beyond = [], []
    for r in records:
        if r.get("speedup") is None or not r.get("us"):
            continue
        b = r["baselines"]
        name = min(b, key=b.get)
        noise = (r.get("us_spread") or 0) + (r.get("baseline_spread", {}).get(name) or 0)
        (within if abs(b[name] - r["us"]) <= noise else beyond).append(r["name"])
    out.append(f"- Differences against the best baseline larger than the two spreads (half-IQR, summed): "
               f"{len(beyond)}; within the noise: {len(within)}" + (f" ({', '.join(within[:8])}"
                                                                   f"{', ...' if len(within) > 8 else ''})." if within
                                                                   else "."))
    if previous:
        prev = {r["name"]: r for r in previous.get("scenarios", [])}
        moved = []
        for r in records:
            p = prev.get(r["name"])
            if p and p.get("us") and r.get("us"):
                noise = (p.get("us_spread") or 0) + (r.get("us_spread") or 0)
                if abs(r["us"] - p["us"]) > noise:
                    moved.append((r["us"] / p["us"], r["name"]))
        moved.sort()
        out.append(f"- Against the previous run ({previous.get('git_sha', '?')[:12]}): {len(moved)} scenarios moved "
                   f"by more than the summed spreads; fastest gains: "
                   + ", ".join(f"{n} x{x:.3f}" for x, n in moved[:5])
                   + "; largest losses: " + ", ".join(f"{n} x{x:.3f}" for x, n in moved[-5:][::-1]) + ".")
    out.append("")
    # Gap triage
    ranked = sorted([r for r in records if r.get("speedup") is not None], key=lambda r: r["speedup"])
    worst = ranked[:10]
    out += ["### Gap triage: what brings the geomean down", ""]
    if worst:
        out.append("Worst 10 by speedup (fastest comparable baseline / ours):")
        out.append("")
        for r in worst:
            out.append(f"- {r['name']}: {r['speedup']:.3f} (ours {r['us']:.4g} us, {_best_baseline(r)} us, "
                       f"roofline {_f(r.get('roofline_frac'), '{:.2f}')}, {r.get('bound')}-bound)")
        counts = Counter(f for r in worst for f in _features(r))
        base = Counter(f for r in ranked for f in _features(r))
        shared = [(c, f) for f, c in counts.items() if c >= 3]
        shared.sort(reverse=True)
        out.append("")
        out.append("What they share (count among the worst 10, and among all scenarios with a baseline): "
                   + ", ".join(f"{f} {c}/10 ({base[f]}/{len(ranked)})" for c, f in shared[:10]) + ".")
        below = [f for f, v in summary["per_family"].items() if v["geomean_speedup"] and v["geomean_speedup"] < 1]
        out.append(f"Families below parity (geomean < 1): {', '.join(sorted(below)) or 'none'}.")
        # what the geomean would be without the worst 10
        rest = geomean(r["speedup"] for r in ranked[10:])
        out.append(f"Geomean without these 10: {_f(rest, '{:.3f}')} "
                   f"(with them {_f(summary['geomean_speedup'], '{:.3f}')}).")
    else:
        out.append("No scenario had a comparable baseline in this run.")
    out.append("")
    # Bound differencing: time outside the kernel
    out += ["### Where time goes outside the kernel (host_us against us)", ""]
    pairs = [(r["host_us"], r["us"], r) for r in records if r.get("host_us") and r.get("us")]
    host_bound = [r for h, u, r in pairs if h > 1.2 * u]
    if pairs:
        out.append(f"- Median host time per eager call: {median([h for h, _, _ in pairs]):.3g} us; median device time:"
                   f" {median([u for _, u, _ in pairs]):.3g} us.")
        out.append(f"- Host-bound when called eagerly (host_us > 1.2 x us): {len(host_bound)} of {len(pairs)}; "
                   f"e.g. " + ", ".join(f"{r['name']} ({r['host_us']:.3g} vs {r['us']:.3g})" for r in host_bound[:6])
                   + ". Under CUDA-graph replay (the engine's decode path) this host cost disappears; eager prefill "
                     "calls pay it once per layer.")
        trivial = meta.get("trivial_op_host_us")
        if trivial:
            small = sorted(((h / (r.get("trivial_op_host_us") or trivial), r["name"], h) for h, u, r in pairs if u < 20),
                           reverse=True)
            out.append(f"- A one-element torch add costs {trivial:.3g} us per eager call on this host at the start of "
                       "the run (same loop; the ratios below use the add timed beside each call where recorded). "
                       + (f"Calls under 20 us of device time: host time per call {small[-1][0]:.2f}x to "
                          f"{small[0][0]:.2f}x of it (worst {small[0][1]}, {small[0][2]:.3g} us)." if small else ""))
        bh = [(r["baseline_host_us"].get(n), n, r["name"]) for r in records for n in (r.get("baseline_host_us") or {})]
        if bh:
            by = {}
            for h, n, _ in bh:
                by.setdefault(n, []).append(h)
            out.append("- Baselines' median host time per eager call: "
                       + ", ".join(f"{n} {median(v):.3g} us" for n, v in sorted(by.items())) + ".")
        graph_fail = [r["name"] for r in records if "graph capture failed" in (r.get("timing_note") or "")]
        if graph_fail:
            out.append(f"- Graph capture FAILED (timed eagerly instead): {', '.join(graph_fail[:10])}.")
    roof = [r for r in records if r.get("roofline_frac")]
    if roof:
        out.append(f"- Roofline: median fraction of the floor {median([r['roofline_frac'] for r in roof]):.2f}; "
                   f"memory-bound {sum(1 for r in roof if r.get('bound') == 'memory')}, compute-bound "
                   f"{sum(1 for r in roof if r.get('bound') == 'compute')}. Lowest: "
                   + ", ".join(f"{r['name']} {r['roofline_frac']:.2f}"
                               for r in sorted(roof, key=lambda r: r["roofline_frac"])[:5]) + ".")
    out.append("")
    # Coverage
    out += ["### Coverage", ""]
    errors = [r for r in records if r.get("error")]
    unsup = [r for r in errors if r.get("unsupported")]
    out.append(f"- Could not run: {len(errors)} scenarios, {len(unsup)} of them rejected as unsupported by the "
               f"library: " + ", ".join(sorted(Counter(r["error"].split(" (library")[0] for r in unsup).keys()))
               + ".")
    crashed = [r for r in errors if not r.get("unsupported")]
    if crashed:
        out.append("- Errors other than 'unsupported': " + "; ".join(f"{r['name']}: {r['error'][:120]}"
                                                                   for r in crashed[:10]) + ".")
    failed = [r for r in records if not r.get("correct") and not r.get("error")]
    if failed:
        out.append("- Ran but FAILED the check: " + "; ".join(f"{r['name']}: {r.get('reason', '')[:160]}"
                                                             for r in failed[:10]) + ".")
    ran = [r for r in records if r.get("us") is not None]
    out.append(f"- Ran and timed: {len(ran)} of {len(records)}. Head configurations timed: "
               + ", ".join(sorted({str(r.get('heads')) for r in ran})) + "; dtypes: "
               + ", ".join(sorted({str(r.get('dtype')) for r in ran})) + ".")
    nc = Counter(f"{n}: {why.split(' (')[0]}" for r in records for n, why in (r.get("not_comparable") or {}).items())
    if nc:
        out.append("- Baselines not comparable, by reason: " + "; ".join(f"{k} ({v})" for k, v in nc.most_common(12))
                   + ".")
    be = Counter(f"{n}: {why[:80]}" for r in records for n, why in (r.get("baseline_errors") or {}).items())
    if be:
        out.append("- Baselines that crashed: " + "; ".join(f"{k} ({v})" for k, v in be.most_common(8)) + ".")
    sk = Counter(n for r in records for n in (r.get("baselines_skipped") or {}))
    if sk:
        out.append("- Baselines skipped by design: " + ", ".join(f"{n} on {c} scenarios" for n, c in sk.items())
                   + " (FlexAttention compiles per shape: it runs on a named subset to keep the run short).")
    out.append("")
    return out


def write_report(path: Path, meta: dict, records: List[dict], summary: dict, unavailable: Dict[str, str],
                 previous: Optional[dict] = None, plots: Sequence[str] = ()) -> None:
    lines = ["# flashseek-eval report", "",
             f"- commit `{meta.get('git_sha')}` (dirty: {meta.get('dirty')}), {meta.get('gpu')}, {meta.get('when')}",
             f"- command: `{meta.get('command')}`",
             f"- roofline (measured in this run): HBM read {meta['roofline']['hbm_GBps']} GB/s, bf16 "
             f"{meta['roofline']['bf16_TFLOPs']} TFLOP/s",
             f"- timing: {meta.get('timing_method')}", ""]
    merged = meta.get("merged_commits")
    if merged:  # merge --allow-commits: say which records each commit measured
        parts = ", ".join(f"{m['records']} records at `{str(m['git_sha'])[:12]}` ({m['input']})" for m in merged)
        lines[3:3] = [f"- merged from several commits (each record's git_sha says which): {parts}"]
    flex = meta.get("flex_subset")
    if "baselines_run" in meta and "flex" not in meta["baselines_run"]:
        lines.append("- FlexAttention was not among this run's baselines (--baselines)")
        lines.append("")
    elif flex is not None:
        lines.append(f"- FlexAttention ran on {len(flex)} named scenarios only (it compiles per shape); elsewhere it "
                     "is not in the comparison" if flex else
                     "- FlexAttention ran on no scenario (--quick: its per-shape compilation does not fit the budget)")
        lines.append("")
    if unavailable:
        lines.append("- baselines unavailable here: " + "; ".join(f"{k}: {v}" for k, v in unavailable.items()))
        lines.append("")
    lines += ["## Summary", "",
              f"- scenarios: {summary['total']}, correct: {summary['correct']}, could not run: {summary['errors']} "
              f"(unsupported: {summary['unsupported']})",
              f"- geomean speedup over {summary['with_baseline']} scenarios with a comparable baseline: "
              f"{_f(summary['geomean_speedup'], '{:.3f}')}; at parity (>= 1.0): {summary['at_parity']}",
              f"- worst: {summary['worst']['name']} at {summary['worst']['speedup']:.3f}" if summary["worst"]
              else "- worst: none (no comparable baseline ran)"]
    alone = summary.get("per_baseline") or {}
    if alone:
        lines.append("- against each baseline alone (geomean of its time over ours where it ran): " + "; ".join(
            f"{name} {_f(v['geomean_speedup'], '{:.3f}')} over {v['scenarios']} ({v['at_parity']} at parity)"
            for name, v in alone.items()))
    lines.append("")
    lines += ["## Per family", ""] + _family_table(summary) + [""]
    lines += targets.report_lines(records, summary, meta.get("trivial_op_host_us"), meta.get("gpu"))
    lines += fp8_report_lines(records)
    lines += dense_report_lines(records)
    for p in plots:
        lines.append(f"![{p}]({p})")
    lines += ["", "## Scenarios, worst first", "",
              "Speedup = fastest comparable baseline / ours. `us` is device time per call, median of the repeats "
              "(CUDA-graph replay for decode-like scenarios, eager otherwise, cold L2), ± half the interquartile "
              "range; `host us` is the wall time per call of back-to-back eager calls.", ""]
    lines += _scenario_table(records) + [""]
    lines += _questions(records, summary, meta, previous)
    path.write_text("\n".join(lines) + "\n")
