#!/usr/bin/env python3
"""Per-kernel device time of one grid scenario's call (torch.profiler / CUPTI): which kernels a call launches, how
long each runs and the idle gap between them, with a cold L2 before each call as the evaluator has. The
evaluator's events time the whole call; this says where inside it the time goes (split kernel, combine, gaps).
FLASHSEEK_EXPERIMENT is read by the library as usual. With --baseline NAME (an evaluator baseline: vllm, cudnn,
...) that baseline's call is timed after ours, the same way, so the two kernel lists sit side by side.
  python3 scripts/kernel_times.py SCENARIO [SCENARIO ...] [--calls 20] [--baseline vllm]"""
import argparse
import statistics
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from flashseek.testing.grid import grid
from flashseek.testing.inputs import make_inputs
from flashseek.testing.run import prepare_call


def kernel_events(prof):
    return sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def baseline_call(s, inputs, name):
    """The evaluator's call of baseline `name` on these inputs (raises unless its output passes its check)."""
    from flashseek.eval import baselines as bl
    from flashseek.testing.reference import reference_outputs
    ref = reference_outputs(inputs)
    bl._common_checks(s, inputs)
    return bl.prepare(name, s, inputs, bl.Dense(s, inputs), ref.out).fn


def time_call(label, call, flush, num_calls):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    per_kernel = defaultdict(list)
    spans, gaps = [], []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(num_calls):
            flush.zero_()
            torch.cuda._sleep(200_000)  # the host enqueues the call while the GPU is busy, as the evaluator
            torch.cuda.synchronize()
            call()
            torch.cuda.synchronize()
    # Each call follows its busy-wait kernel: that kernel starts a new group; the L2 flush is dropped.
    groups, cur = [], None
    for e in kernel_events(prof):
        lower = e.name.lower()
        if "sleep" in lower or "spin" in lower:
            if cur:
                groups.append(cur)
            cur = []
        elif cur is not None and not any(w in lower for w in ("elementwise", "fill")):
            cur.append(e)
    if cur:
        groups.append(cur)
    for g in groups:
        spans.append(g[-1].time_range.end - g[0].time_range.start)
        for i, e in enumerate(g):
            per_kernel[(i, e.name[:90])].append(e.time_range.end - e.time_range.start)
            if i:
                gaps.append(e.time_range.start - g[i - 1].time_range.end)
    if not spans:
        print(f"== {label}: no kernels seen")
        return
    print(f"== {label}: {len(groups)} calls, span median {statistics.median(spans):.1f} us"
          + (f", gap median {statistics.median(gaps):.1f} us" if gaps else ""))
    for (i, kname), ts in sorted(per_kernel.items()):
        print(f"   #{i} {statistics.median(ts):8.1f} us  (n {len(ts)})  {kname}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--baseline", default=None, help="also time this evaluator baseline's call")
    args = ap.parse_args()
    scenarios = {s.name: s for s in grid("all")}
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for name in args.names:
        if name not in scenarios:
            print(f"no scenario {name!r}")
            continue
        s = scenarios[name]
        inputs = make_inputs(s, "cuda", seed=1234)
        calls = [("flashseek", prepare_call(s, inputs))]
        if args.baseline:
            try:
                calls.append((args.baseline, baseline_call(s, inputs, args.baseline)))
            except Exception as exc:  # a baseline that cannot take the scenario: say so, keep ours
                print(f"   [{args.baseline}] not timed: {exc}")
        for who, call in calls:
            time_call(f"{name} [{who}]", call, flush, args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
