#!/usr/bin/env python3
"""Device time of the grid's split-considered decodes at forced split counts (FLASHSEEK_EXPERIMENT=splits=N, one
subprocess per count: the library reads the variable once per process), timed as the evaluator times them (its
DeviceTimer: cold L2, graph replay where the scenario is graph-timed, median), each output checked against the
fp32 reference. The table it prints is what the split cost model (src/host/split_heuristic.cpp) is fitted to:
per scenario, the time at each count, the default's time and the best count.
  python3 scripts/split_sweep.py [--values default,1,2,4,8] [--filter REGEX] [--set decode|rows128] [--json FILE]
--set rows128: the split-considered calls on 128-row tiles (the operator grid's short varlen batches, cascade and
mixed steps), which keep the split model before entry 30; the sweep to fit a model for them."""
import argparse
import json
import os
import re
import subprocess
import sys

DEFAULT_VALUES = "default,1,2,3,4,8,16,32,64,128"
# Decodes whose grid leaves SMs idle (KV-head tiles < 0.8 x 132), so the heuristic considers splitting.
DEFAULT_FILTER = (r"^(decode-paged/(OSSt8|L70t8)/(8q1s1k|32q1s2k|64q1s4k)/p16|decode-paged/(L70|L8|Q7)/8q1s1k/p16"
                  r"|decode-splitkv/.*/splits0|lse/.*cp-gqa)$")
# Scenario sets: (grid, filter). rows128: 128-row tiles whose grids leave SMs idle (short varlen batches of the
# operator grid, cascade prefixes and suffixes, chunked prefill beside decodes).
SETS = {"decode": ("perf", DEFAULT_FILTER),
        "rows128": ("all", r"^(operator/(core|breadth|softcap50|sliding256)/S1/.*|lse/.*cascade.*|mixed/.*)$")}


def child(grid_name, filter_re):
    import torch

    from flashseek.eval.timing import DeviceTimer
    from flashseek.testing.grid import grid
    from flashseek.testing.inputs import make_inputs
    from flashseek.testing.run import check_call, prepare_call

    timer = DeviceTimer(repeats=30, max_seconds=1.0)
    results = {}
    for s in grid(grid_name):
        if not re.search(filter_re, s.name):
            continue
        inputs = make_inputs(s, "cuda", seed=1234)
        call = prepare_call(s, inputs)
        timing, (out, lse) = timer.time(call, s.timing)
        ok = check_call(s, inputs, out, lse).correct
        results[s.name] = {"us": timing.us, "spread": timing.us_spread, "correct": bool(ok)}
        del inputs, call, out, lse
        torch.cuda.empty_cache()
    print("RESULTS " + json.dumps(results), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", default=DEFAULT_VALUES)
    ap.add_argument("--filter", default=None, help="a regex over scenario names (default: the set's)")
    ap.add_argument("--set", default="decode", choices=sorted(SETS))
    ap.add_argument("--json", default=None)
    ap.add_argument("--with", dest="with_tokens", default="",
                    help="FLASHSEEK_EXPERIMENT tokens put before each forced count (e.g. 'tile=7': the two-CTA "
                         "keys-as-M decode tile, which the default's split decodes take in twice the splits; a forced "
                         "splits=N alone runs on the tile the model's count would, N exactly)")
    args = ap.parse_args()
    grid_name, set_filter = SETS[args.set]
    filter_re = args.filter or set_filter
    if os.environ.get("SPLIT_SWEEP_CHILD") == "1":
        child(grid_name, filter_re)
        return 0
    values = args.values.split(",")
    table = {}
    for v in values:
        env = dict(os.environ, SPLIT_SWEEP_CHILD="1")
        env.pop("FLASHSEEK_EXPERIMENT", None)
        if v != "default":
            env["FLASHSEEK_EXPERIMENT"] = ",".join(t for t in (args.with_tokens, f"splits={v}") if t)
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--set", args.set, "--filter", filter_re],
                              env=env,
                              capture_output=True, text=True)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULTS ")]
        if proc.returncode != 0 or not lines:
            print(f"value {v}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}", flush=True)
            continue
        table[v] = json.loads(lines[-1][len("RESULTS "):])
        print(f"value {v}: {len(table[v])} scenarios", flush=True)
    names = sorted({n for r in table.values() for n in r})
    print(f"\n{'scenario':50s} " + " ".join(f"{v:>8s}" for v in values) + "     best")
    wrong = 0
    for n in names:
        cells, best = [], None
        for v in values:
            r = table.get(v, {}).get(n)
            if r is None:
                cells.append(f"{'-':>8s}")
                continue
            wrong += not r["correct"]
            cells.append(f"{r['us']:8.1f}" + ("" if r["correct"] else "!"))
            if v != "default" and r["correct"] and (best is None or r["us"] < best[1]):
                best = (v, r["us"])
        d = table.get("default", {}).get(n)
        gain = f"{best[0]:>4s} {best[1] / d['us']:5.2f}x" if best and d else ""
        print(f"{n:50s} " + " ".join(cells) + f"  {gain}")
    print(f"{wrong} wrong outputs ('!')")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
