#!/usr/bin/env python3
"""One scenario of the evaluator's grids (flashseek.testing.grid), by name, for a profiler: builds its inputs,
runs its call a few times to warm up, then once between cudaProfilerStart / cudaProfilerStop (ncu
--profile-from-start off sees that call only), and checks that call's output against the fp32 reference (a
profile of a wrong kernel is not worth reading). FLASHSEEK_EXPERIMENT is read by the library as usual.
With --baseline NAME (an evaluator baseline: vllm, cudnn, fa2, ...) that baseline's call is the profiled one, and
its output is checked the way the evaluator checks it (against the fp32 reference, vLLM's rule).
  python3 scripts/one_scenario.py decode-paged/L8/128q1s8k/p16 [--warmup 3] [--baseline vllm] [--list SUBSTRING]"""
import argparse
import sys

import torch

from flashseek.testing.grid import grid
from flashseek.testing.inputs import make_inputs
from flashseek.testing.run import check_call, prepare_call


def profile_baseline(s, inputs, name, warmup):
    from flashseek.eval import baselines as bl
    from flashseek.testing.reference import reference_outputs
    ref = reference_outputs(inputs)
    bl._common_checks(s, inputs)
    prep = bl.prepare(name, s, inputs, bl.Dense(s, inputs), ref.out)  # raises unless its output passes
    for _ in range(warmup):
        prep.fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    prep.fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"{s.name} [{name}]: correct (checked by the evaluator's baseline rule)")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name", nargs="?")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--baseline", default=None, help="profile this evaluator baseline's call instead of ours")
    ap.add_argument("--list", default=None, help="print the scenario names that contain this and exit")
    args = ap.parse_args()
    scenarios = {s.name: s for s in grid("all")}
    if args.list is not None:
        print("\n".join(n for n in scenarios if args.list in n))
        return 0
    if args.name not in scenarios:
        print(f"no scenario {args.name!r}; --list SUBSTRING shows names", file=sys.stderr)
        return 2
    s = scenarios[args.name]
    inputs = make_inputs(s, "cuda", seed=args.seed)
    if args.baseline:
        return profile_baseline(s, inputs, args.baseline, args.warmup)
    call = prepare_call(s, inputs)
    for _ in range(args.warmup):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    out, lse = call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    res = check_call(s, inputs, out, lse)
    print(f"{s.name}: {'correct' if res.correct else 'WRONG: ' + res.reason}")
    return 0 if res.correct else 1


if __name__ == "__main__":
    sys.exit(main())
