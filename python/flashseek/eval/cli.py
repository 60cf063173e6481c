"""flashseek-eval: check and time the grid scenarios against baselines; write results.json, report.md and plots.

Exit codes: 0 the run finished (failures are in the results; --strict makes them exit 1), 2 it cannot run here
(no torch, no GPU, no compiled kernels, bad arguments), 1 --strict and some supported scenario failed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import List, Optional

from flashseek.testing import grid as g

FLEX_SUBSET = (  # FlexAttention compiles per shape (tens of seconds): it runs on these representatives only
    "prefill-dense/L8/q8k", "prefill-dense/OSS/8q2k", "prefill-dense/G27/q8k",
    "prefill-varlen/L8/q257_q1k_q63_q4093", "prefill-varlen/MHA/4q2k/bidir-w128",
    "decode-paged/L8/128q1s8k/p16", "decode-paged/L70t8/32q1s2k/p16", "spec-decode/L8/32q4s2k/p16",
    "mixed/L8/q2k_32q1s2k/p16", "sliding-window/OSS/q8k/p16/w128", "softcap/G9/2q4k/p16/sc50",
    "softcap/G27/64q1s4k/p16/sc50",
)


def _parser() -> argparse.ArgumentParser:
    from flashseek.eval import BASELINES
    p = argparse.ArgumentParser(prog="flashseek-eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", choices=("perf", "operator", "all"), default="all",
                   help="perf: grid.md section 1; operator: section 2; all: both (default)")
    p.add_argument("--family", action="append", default=None,
                   help=f"only these families (repeat or comma-separate): {', '.join(g.ALL_FAMILIES)}")
    p.add_argument("--filter", default=None, help="substring of scenario names (a regex when no name contains it)")
    p.add_argument("--quick", action="store_true", help="a representative subset that runs in under 2 minutes")
    p.add_argument("--baselines", default=",".join(BASELINES),
                   help=f"comma list of baselines (default all; 'none' for none): {', '.join(BASELINES)}")
    p.add_argument("--flex", choices=("subset", "all"), default="subset",
                   help="FlexAttention on the named subset (default, compile time) or on every scenario")
    p.add_argument("--out", default="eval-out", help="output directory (results.json, report.md, *.png)")
    p.add_argument("--repeats", type=int, default=30, help="timed repeats per call (median taken)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--power-state", choices=("sustained", "settled"), default="sustained",
                   help="sustained: each call timed right after its own 0.3 s host-time loop (at the clock its "
                        "sustained run settles to); settled: timed first, after an idle pause, then the host loop "
                        "(every call from the same cool state; timing.py)")
    p.add_argument("--compare", default=None, help="a previous results.json: report what moved beyond the spread")
    p.add_argument("--strict", action="store_true", help="exit 1 when a supported scenario fails its check")
    p.add_argument("--list", action="store_true", help="list the selected scenarios and exit (needs no GPU)")
    return p


def _fail(msg: str) -> int:
    print(f"flashseek-eval: {msg}", file=sys.stderr)
    return 2


def _select(args) -> List[g.Scenario]:
    fams = None
    if args.family:
        fams = [f.strip() for item in args.family for f in item.split(",") if f.strip()]
    scenarios = g.select(g.grid(args.grid), families=fams, name_filter=args.filter)
    if args.quick:
        scenarios = g.quick_subset(scenarios)
    return scenarios


def _baseline_names(text: str) -> List[str]:
    from flashseek.eval import BASELINES
    if text.strip().lower() in ("none", ""):
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline {', '.join(unknown)}; valid baselines: {', '.join(BASELINES)}")
    return names


class _Progress:
    """One line per scenario on stderr; an in-place bar when stderr is a terminal."""

    def __init__(self, total: int):
        self.total, self.t0, self.tty = total, time.time(), sys.stderr.isatty()

    def update(self, i: int, rec: dict) -> None:
        state = "ok" if rec.get("correct") else ("ERROR" if rec.get("error") else "FAIL")
        us = f"{rec['us']:.4g}us" if rec.get("us") else "-"
        sp = f"x{rec['speedup']:.3f}" if rec.get("speedup") else ""
        el = time.time() - self.t0
        line = f"[{i}/{self.total} {el:5.0f}s] {state:5} {us:>10} {sp:>7} {rec['name']}"
        if self.tty:
            width = 30
            done = int(width * i / self.total)
            sys.stderr.write("\r\033[K" + f"|{'#' * done}{'.' * (width - done)}| " + line[:150])
            if i == self.total:
                sys.stderr.write("\n")
            if state != "ok":
                sys.stderr.write("\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        scenarios = _select(args)
        names = _baseline_names(args.baselines)
    except ValueError as exc:
        return _fail(str(exc))
    if not scenarios:
        return _fail("no scenario matches the selection")
    if args.list:
        for s in scenarios:
            print(f"{s.name}\t{s.timing}\t{s.unsupported_reason or ''}")
        print(f"{len(scenarios)} scenarios", file=sys.stderr)
        return 0
    try:
        import torch
    except ImportError as exc:
        return _fail(f"cannot run: torch is not importable ({exc})")
    import flashseek
    reason = flashseek.unavailable_reason()
    if reason is not None:
        return _fail(f"cannot run here: {reason}")

    from flashseek.eval import baselines as bl
    from flashseek.eval.plots import write_plots
    from flashseek.eval.report import git_info, results_document, write_json, write_report
    from flashseek.eval.roofline import measure_ceilings
    from flashseek.eval.runner import evaluate
    from flashseek.eval.stats import summarize
    from flashseek.eval.timing import SETTLE_SECONDS, DeviceTimer

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    unavailable = {n: r for n in names if (r := bl.availability(n)) is not None}
    runnable = [n for n in names if n not in unavailable]
    previous = json.loads(Path(args.compare).read_text()) if args.compare else None
    print(f"flashseek-eval: {len(scenarios)} scenarios; baselines {', '.join(runnable) or 'none'}"
          + (f" (unavailable: {', '.join(unavailable)})" if unavailable else ""), file=sys.stderr)
    ceilings = measure_ceilings()
    print(f"flashseek-eval: ceilings {ceilings}", file=sys.stderr)
    timer = DeviceTimer(repeats=args.repeats, power_state=args.power_state)
    # The host's own floor: a one-element add timed like every call's host_us (this host is slow; targets on
    # host time are ratios to this, measured in the same run).
    one = torch.zeros(1, device="cuda")
    trivial_host_us = round(min(timer.host_us(lambda: one.add_(1)) for _ in range(3)), 2)
    flex_names = None if args.flex == "all" else set(FLEX_SUBSET)
    if args.quick and args.flex == "subset":
        # FlexAttention compiles per shape (10-25 s each): within --quick's 2 minutes it runs on none.
        flex_names = set()
    meta = {
        **git_info(),
        "gpu": torch.cuda.get_device_name(),
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(shlex.quote(a) for a in [os.path.basename(sys.argv[0]) or "flashseek-eval"]
                            + (sys.argv[1:] if argv is None else list(argv))),
        "roofline": ceilings,
        "torch": torch.__version__,
        "seed": args.seed,
        "timing_method": ("CUDA events; median of up to --repeats after warm-up; before each repeat the GPU is kept "
                          "busy (torch.cuda._sleep) and a 256 MB buffer is zeroed to evict the 60 MB L2, outside the "
                          "timed region; CUDA-graph replay where timing_mode is graph; us_spread = half the "
                          "interquartile range; host_us = wall time per call of back-to-back eager calls; power "
                          f"state {args.power_state}: "
                          + ("each call timed right after its own 0.3 s host-time loop (ours: the host-floor "
                             "add loop before it)"
                             if args.power_state == "sustained"
                             else f"each call timed after {SETTLE_SECONDS * 1e3:.0f} ms idle, before its host-time "
                                  "loop")),
        "flex_subset": None if flex_names is None else sorted(flex_names),
        "baselines_run": list(runnable),
        "baselines_unavailable": unavailable,
        "trivial_op_host_us": trivial_host_us,
    }
    records = []
    progress = _Progress(len(scenarios))
    for i, s in enumerate(scenarios, 1):
        try:
            rec = evaluate(s, timer, ceilings, runnable, flex_names, args.seed)
        except Exception as exc:  # never lose a scenario: record it and go on
            torch.cuda.synchronize()
            rec = {"name": s.name, "family": s.family, "correct": False, "baselines": {},
                   "error": f"evaluator error: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
        records.append(rec)
        progress.update(i, rec)
        # A run cut short (a time limit, a lost machine) keeps every scenario finished so far.
        with open(out_dir / "records.partial.jsonl", "a") as partial:
            partial.write(json.dumps(rec, default=str) + "\n")
    summary = summarize(records)
    summary_schema = {k: summary[k] for k in ("total", "correct", "geomean_speedup", "at_parity", "worst")}
    summary_schema.update({k: v for k, v in summary.items() if k not in summary_schema})
    doc = results_document(meta, records, summary_schema)
    write_json(out_dir / "results.json", doc)
    plots = write_plots(out_dir, records)
    write_report(out_dir / "report.md", meta, records, summary, unavailable, previous, plots)
    gm = summary["geomean_speedup"]
    print(f"flashseek-eval: {summary['correct']}/{summary['total']} correct, geomean speedup "
          f"{gm if gm is None else round(gm, 3)}, at parity {summary['at_parity']}/{summary['with_baseline']}; "
          f"wrote {out_dir}/results.json, report.md", file=sys.stderr)
    if args.strict and any(not r.get("correct") and not r.get("unsupported") for r in records):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
