#!/usr/bin/env python3
"""Decode A/B in one build: the decode-paged and decode-splitkv scenarios of the grid, timed for each
FLASHSEEK_EXPERIMENT value named on the command line (one worker process per value: the library reads the
variable once per process), against cuDNN (torch SDPA) on a dense copy of the cache.

Timing as the evaluator's: CUDA-graph replay, L2 evicted before each repeat (flashseek.eval.timing), median.
Each worker also checks its output against cuDNN's (max |diff|; the vLLM rule's atol is 1.5e-2).

    scripts/bench_decode.py default pf0 combine-warp,split-fa      # 'default' = variable unset
    scripts/bench_decode.py default pdl --filter L70t8 --filter splitkv
    scripts/bench_decode.py default cta2 bn64s6      # decode tile experiments (perf-log entry 10), ~40 s
    scripts/bench_decode.py default splits=32 --sweep L8:1,4:8k,16k,32k,64k,128k --power sustained
Prints us and GB/s of K+V read per scenario and experiment, cuDNN's, and ours/cuDNN speedups; a geomean per
family at the end.

--sweep HEADS:BATCHES:LENGTHS times decode steps of one query token per sequence at each batch size and key count
instead of the grid's scenarios (page 16, the split count left to the library), and fits time = t0 + bytes / rate
per batch size for ours and cuDNN: whether a long split decode's gap to cuDNN is a fixed cost (t0) or a streaming
rate, and where along the length it opens (perf-log entry 115).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

FAMILIES = ("decode-paged", "decode-splitkv")


def sweep_scenarios(spec):
    """'L8:1,4:8k,32k' -> decode-splitkv scenarios L8/q1s8k, L8/q1s32k, L8/4q1s8k, L8/4q1s32k (page 16)."""
    from flashseek.testing.grid import make_scenario
    try:
        heads, batches, lengths = spec.split(":")
    except ValueError:
        raise SystemExit(f"--sweep: expected HEADS:BATCHES:LENGTHS (e.g. L8:1,4:8k,32k), got {spec!r}")
    return [make_scenario("decode-splitkv", heads, f"{'' if b == '1' else b}q1s{k}", suffix=["p16", "sweep"],
                          num_splits=0)
            for b in batches.split(",") for k in lengths.split(",")]


def scenarios(filters, sweep=None):
    from flashseek.testing.grid import performance_grid
    out = sweep_scenarios(sweep) if sweep else [s for s in performance_grid() if s.family in FAMILIES]
    for f in filters:
        out = [s for s in out if f in s.name]
    return out


def kv_bytes(s):
    return sum(k for _, k in s.seqs) * s.num_heads_kv * (s.head_dim + s.head_dim_v) * 2


def worker(args):
    import torch
    from flashseek.eval import baselines as bl
    from flashseek.eval.timing import DeviceTimer, measure
    from flashseek.testing.inputs import make_inputs
    from flashseek.testing.run import prepare_call

    timer = DeviceTimer(repeats=args.repeats, warmup=2, max_seconds=0.4,
                        power_state=args.power or "sustained")
    for s in scenarios(args.filter, args.sweep):
        rec = {"name": s.name, "family": s.family, "bytes": kv_bytes(s)}
        try:
            inputs = make_inputs(s, "cuda", seed=0)
            fn = prepare_call(s, inputs)
            out = fn()[0].clone()
            dense = bl.Dense(s, inputs)
            prep = bl._cudnn(s, inputs, dense)
            ref = prep.to_varlen(prep.fn())
            rec["err"] = float((out.float() - ref.float()).abs().max().item())
            if args.power:  # the evaluator's order: each call's own host loop, then its timing (or the reverse)
                _, t, _ = measure(timer, fn, "graph")
            else:
                t, _ = timer.time(fn, "graph", host_us=30.0)
            rec["us"] = t.us
            if args.cudnn:
                if args.power:
                    _, tc, _ = measure(timer, prep.fn, "graph")
                else:
                    tc, _ = timer.time(prep.fn, "graph", host_us=30.0)
                rec["cudnn_us"] = tc.us
            del inputs, fn, out, dense, prep, ref
        except Exception as exc:  # record and go on
            rec["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            torch.cuda.synchronize()
        torch.cuda.empty_cache()
        print(json.dumps(rec), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("experiments", nargs="*", default=["default"])
    ap.add_argument("--filter", action="append", default=[], help="keep scenarios whose name contains this")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--cudnn", action="store_true")
    ap.add_argument("--sweep", help="HEADS:BATCHES:LENGTHS, e.g. L8:1,4:8k,16k,32k,64k,128k (module docstring)")
    ap.add_argument("--power", choices=("sustained", "settled"),
                    help="time as the evaluator does, in this power state (default: no host loop first)")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0

    t0 = time.time()
    results = {}
    for i, exp in enumerate(args.experiments):
        env = dict(os.environ)
        env.pop("FLASHSEEK_EXPERIMENT", None)
        if exp != "default":
            env["FLASHSEEK_EXPERIMENT"] = exp
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--repeats", str(args.repeats)]
        cmd += sum((["--filter", f] for f in args.filter), [])
        cmd += ["--sweep", args.sweep] if args.sweep else []
        cmd += ["--power", args.power] if args.power else []
        if i == 0:
            cmd.append("--cudnn")
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        recs = {}
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                recs[r["name"]] = r
        for line in proc.stderr.splitlines():  # the library's own notes (e.g. a variant's resident CTAs per SM)
            if line.startswith("flashseek:"):
                print(f"[{exp}] {line}")
        if proc.returncode != 0:
            print(f"[{exp}] worker exit {proc.returncode}: {proc.stderr.strip()[-800:]}")
        results[exp] = recs
        print(f"[{exp}] {len(recs)} scenarios, {time.time() - t0:.0f} s", flush=True)

    exps = args.experiments
    names = list(results[exps[0]].keys()) if exps else []
    for exp in exps[1:]:
        names += [n for n in results[exp] if n not in names]
    head = f"{'scenario':48s} {'cuDNN us':>9s} {'GB/s':>6s} | " + " | ".join(f"{e[:22]:>22s}" for e in exps)
    print(head)
    print(f"{'':48s} {'':>9s} {'':>6s} | " + " | ".join(f"{'us  GB/s  x cuDNN':>22s}" for _ in exps))
    speedups = {e: {} for e in exps}
    for n in names:
        base = results[exps[0]].get(n, {})
        cu = base.get("cudnn_us")
        nbytes = base.get("bytes") or next((results[e][n]["bytes"] for e in exps if n in results[e]), 0)
        line = f"{n[:48]:48s} {cu if cu else float('nan'):9.1f} {nbytes / cu / 1e3 if cu else float('nan'):6.0f} | "
        cells = []
        for e in exps:
            r = results[e].get(n)
            if r is None or "us" not in r:
                cells.append(f"{(r or {}).get('error', 'missing')[:22]:>22s}")
                continue
            x = cu / r["us"] if cu else float("nan")
            bad = "!" if r.get("err", 0) > 1.5e-2 or not math.isfinite(r.get("err", 0)) else " "
            cells.append(f"{r['us']:7.1f} {nbytes / r['us'] / 1e3:5.0f} {x:5.2f}x{bad}")
            fam = r["family"]
            if cu and math.isfinite(x):
                speedups[e].setdefault(fam, []).append(x)
        print(line + " | ".join(f"{c:>22s}" for c in cells))
    print("geomean ours/cuDNN speedup ('!' above: output differs from cuDNN's by more than 1.5e-2)")
    for e in exps:
        parts = [f"{fam} {math.exp(sum(map(math.log, xs)) / len(xs)):.3f} (n={len(xs)})"
                 for fam, xs in sorted(speedups[e].items())]
        print(f"  {e}: " + ", ".join(parts))
    if args.sweep:
        print_fits(results, exps)
    print(f"total {time.time() - t0:.0f} s")
    return 0


def linear_fit(points):
    """Least squares us = t0 + bytes / rate over (bytes, us) points: (t0 us, rate GB/s), or None."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(b for b, _ in points) / n
    my = sum(u for _, u in points) / n
    sxx = sum((b - mx) ** 2 for b, _ in points)
    if sxx == 0:
        return None
    slope = sum((b - mx) * (u - my) for b, u in points) / sxx  # us per byte
    return my - slope * mx, (1e-3 / slope if slope > 0 else float("inf"))


def batch_of(name):
    """'decode-splitkv/L8/4q1s8k/p16/sweep' -> 4 (sequences of a sweep scenario)."""
    return int(name.split("/")[2].split("q")[0] or 1)


def print_fits(results, exps):
    """Per batch size: the fit over its lengths for cuDNN and each experiment."""
    print("fit us = t0 + bytes / rate per batch size (t0 us, rate GB/s)")
    first = results[exps[0]]

    def points(recs, batch, key):
        return [(r["bytes"], r[key]) for r in recs.values() if batch_of(r["name"]) == batch and key in r]

    for b in sorted({batch_of(r["name"]) for r in first.values()}):
        cells = []
        for label, recs, key in [("cuDNN", first, "cudnn_us")] + [(e[:20], results[e], "us") for e in exps]:
            fit = linear_fit(points(recs, b, key))
            if fit:
                cells.append(f"{label} t0 {fit[0]:6.1f} rate {fit[1]:6.0f}")
        print(f"  batch {b:3d}: " + " | ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
