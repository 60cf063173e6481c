#!/usr/bin/env python3
"""Where a small call's host time goes: eager wall time per call of back-to-back calls (the evaluator's host_us),
for the full call and with the library stopping early (FLASHSEEK_EXPERIMENT diagnostics, one subprocess each: the
library reads the variable once per process), beside a one-element torch add timed the same way in the same
process. Differences between the rows split the host time into:
  binding + allocations + validation + plan   host-stop-run
  parameters + TMA tensor maps                host-stop-launch - host-stop-run
  kernel launches                             full call - host-stop-launch
The Python wrapper's own share was measured on the CPU (1.5 us a call, perf-log).
  python3 scripts/host_breakdown.py [SCENARIO ...]   (default: the small-decode family and two 8-sequence decodes)"""
import json
import os
import subprocess
import sys

DEFAULT = ["small-decode/L8/q1s1k/p16", "decode-paged/L70t8/8q1s1k/p16", "decode-paged/L8/8q1s1k/p16"]
VALUES = ["default", "host-stop-launch", "host-stop-run"]


def child(names):
    import torch

    from flashseek.eval.timing import DeviceTimer
    from flashseek.testing.grid import grid
    from flashseek.testing.inputs import make_inputs
    from flashseek.testing.run import prepare_call

    scenarios = {s.name: s for s in grid("all")}
    timer = DeviceTimer()
    one = torch.zeros(1, device="cuda")
    add = lambda: one.add_(1.0)  # noqa: E731
    out = {}
    for name in names:
        s = scenarios[name]
        call = prepare_call(s, make_inputs(s, "cuda", seed=1234))
        rows = []
        for _ in range(5):  # interleaved, so that host drift hits both alike
            rows.append((timer.host_us(call), timer.host_us(add)))
        rows.sort()
        out[name] = {"call_us": rows[len(rows) // 2][0], "add_us": sorted(r[1] for r in rows)[len(rows) // 2]}
    print("RESULTS " + json.dumps(out), flush=True)


def main(argv):
    names = [a for a in argv if not a.startswith("--")] or DEFAULT
    if os.environ.get("HOST_BREAKDOWN_CHILD") == "1":
        child(names)
        return 0
    table = {}
    for value in VALUES:
        env = dict(os.environ, HOST_BREAKDOWN_CHILD="1")
        env.pop("FLASHSEEK_EXPERIMENT", None)
        if value != "default":
            env["FLASHSEEK_EXPERIMENT"] = value
        proc = subprocess.run([sys.executable, os.path.abspath(__file__)] + names, env=env, capture_output=True,
                              text=True)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULTS ")]
        if proc.returncode != 0 or not lines:
            print(f"{value}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}")
            return 2
        table[value] = json.loads(lines[-1][len("RESULTS "):])
    print(f"{'scenario':36s} {'add':>6s} {'call':>7s} {'to run()':>9s} {'params+maps':>12s} {'launches':>9s}  (us)")
    for n in names:
        full, launch, start = (table[v][n] for v in VALUES)
        print(f"{n:36s} {full['add_us']:6.1f} {full['call_us']:7.1f} {start['call_us']:9.1f} "
              f"{launch['call_us'] - start['call_us']:12.1f} {full['call_us'] - launch['call_us']:9.1f}")
    print("call: the full call's wall time per back-to-back eager call (the larger of host and device time);"
          " 'to run()': binding, allocations, validation, plan; the last two columns are differences.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
