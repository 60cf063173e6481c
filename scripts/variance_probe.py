#!/usr/bin/env python3
"""Whether a scenario's time varies between repeats, and whether ours varies where FA3's does not: the evaluator's
timing (flashseek.eval.timing.DeviceTimer: sleep, cold L2, events) in alternating rounds of ours and FA3's call,
every sample printed sorted, with the SM clock, power and temperature nvidia-smi reads after each round.
FLASHSEEK_EXPERIMENT is read by the library as usual (run the script once per setting to compare them).
--heat: each round first runs the evaluator's host-time loop (0.3 s of back-to-back calls), as the evaluator does
before it times a call, and reads the GPU's state between that loop and the timing.
  python3 scripts/variance_probe.py NAME [NAME ...] [--rounds 3] [--repeats 30] [--heat]"""
import argparse
import subprocess
import sys

import torch

from flashseek.eval import baselines as bl
from flashseek.eval.timing import DeviceTimer
from flashseek.testing.grid import grid
from flashseek.testing.inputs import make_inputs
from flashseek.testing.reference import reference_outputs
from flashseek.testing.run import check_call, prepare_call


def gpu_state():
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except Exception as exc:  # the probe's numbers stand without it
        return f"(nvidia-smi: {exc})"


def describe(label, samples):
    s = sorted(samples)
    n = len(s)
    q = lambda f: s[min(n - 1, int(f * n))]
    return (f"{label:5s} n {n:3d} min {s[0]:8.1f} p25 {q(0.25):8.1f} med {q(0.5):8.1f} p75 {q(0.75):8.1f} "
            f"max {s[-1]:8.1f}  all: " + " ".join(f"{x:.0f}" for x in s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--heat", action="store_true", help="the evaluator's host-time loop before each timing")
    args = ap.parse_args()
    scenarios = {s.name: s for s in grid("all")}
    timer = DeviceTimer(repeats=args.repeats, max_seconds=10.0)
    for name in args.names:
        if name not in scenarios:
            print(f"no scenario {name!r}", file=sys.stderr)
            return 2
        s = scenarios[name]
        inputs = make_inputs(s, "cuda", seed=args.seed)
        ref = reference_outputs(inputs)
        ours = prepare_call(s, inputs)
        out, lse = ours()
        res = check_call(s, inputs, out, lse, ref)
        if not res.correct:  # a wrong kernel's time is not worth reading
            print(f"{name}: ours is wrong: {res.reason}", file=sys.stderr)
            return 1
        fa3 = bl.prepare("vllm", s, inputs, bl.Dense(s, inputs), ref.out).fn
        print(f"{name} (timing {s.timing}); before: {gpu_state()}", flush=True)
        for r in range(args.rounds):
            for label, fn in (("ours", ours), ("fa3", fa3)):
                host = None
                if args.heat:
                    host = timer.host_us(fn)
                    print(f"  round {r} {label:5s} host loop {host:.1f} us a call; then: {gpu_state()}", flush=True)
                t, _ = timer.time(fn, s.timing, host_us=host)
                print(f"  round {r} {describe(label, t.samples)}", flush=True)
                print(f"           after: {gpu_state()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
