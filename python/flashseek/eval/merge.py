"""Merge evaluator runs of disjoint scenario sets (e.g. families run in separate GPU calls) into one results
document, report and plots, with the summary recomputed over all scenarios. Every input must be from the same
commit and GPU; the merged document lists each input's command.

    python -m flashseek.eval.merge --out DIR RUN1/results.json RUN2/results.json [RUN3/records.partial.jsonl ...]

A scenario that appears in several inputs keeps its first record. --allow-commits lets the inputs come from
different commits, for re-running only the families a later commit's change can reach (its author must know
which): the document's git_sha is the first input's, every record carries the git_sha it was measured at, and
merged_commits lists each input's commit and how many records it gave.
"""
import argparse
import json
import sys
from pathlib import Path

from flashseek.eval.plots import write_plots
from flashseek.eval.report import results_document, write_json, write_report
from flashseek.eval.stats import summarize


def load(path: Path):
    if path.suffix == ".jsonl":
        return None, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doc = json.loads(path.read_text())
    return doc, doc["scenarios"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--allow-commits", action="store_true",
                    help="inputs may come from different commits (each record keeps its own git_sha)")
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args(argv)
    metas, records, seen, taken = [], [], set(), []
    for name in args.inputs:
        doc, recs = load(Path(name))
        sha = None
        if doc is not None:
            metas.append({k: v for k, v in doc.items() if k not in ("scenarios", "summary")})
            sha = doc.get("git_sha")
        kept = 0
        for r in recs:
            if r["name"] in seen:
                print(f"merge: {r['name']} appears twice; keeping the first", file=sys.stderr)
                continue
            seen.add(r["name"])
            if args.allow_commits:
                r = dict(r, git_sha=r.get("git_sha") or sha or (metas[-1].get("git_sha") if metas else None))
            records.append(r)
            kept += 1
        taken.append({"input": str(name), "git_sha": sha, "records": kept})
    if not metas:
        print("merge: need at least one results.json for the run metadata", file=sys.stderr)
        return 2
    shas = {m.get("git_sha") for m in metas}
    gpus = {m.get("gpu") for m in metas}
    if (len(shas) > 1 and not args.allow_commits) or len(gpus) > 1:
        print(f"merge: inputs differ in commit {shas} or GPU {gpus}", file=sys.stderr)
        return 2
    meta = dict(metas[0])
    if args.allow_commits:
        meta["merged_commits"] = taken
    meta["command"] = " && ".join(m.get("command", "") for m in metas)
    meta["merged_from"] = [str(n) for n in args.inputs]
    summary = summarize(records)
    keys = ("total", "correct", "geomean_speedup", "at_parity", "worst")
    summary_schema = {k: summary[k] for k in keys}
    summary_schema.update({k: v for k, v in summary.items() if k not in summary_schema})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", results_document(meta, records, summary_schema))
    plots = write_plots(out, records)
    write_report(out / "report.md", meta, records, summary, meta.get("baselines_unavailable", {}), None, plots)
    print(f"merged {len(records)} scenarios into {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
