#!/usr/bin/env python3
"""Compare evaluator runs of two variants, A and B, taken in alternating rounds (scripts/gpu-run.sh ab:...).
Per scenario: B's time over A's, each the geometric mean of its rounds' medians; per family and overall the
geometric mean of those ratios; and the noise floor: A's round-to-round ratio (|log| mean), the size of a change
that one pair of rounds cannot tell from nothing. Only scenarios both variants ran correctly count.
--of NAME compares a baseline's times instead of ours (the same code measured two ways, e.g. the evaluator's two
power states: ours and FA3's each, docs/perf-log.md entry 87); scenarios without that baseline are left out.
  python3 scripts/ab_compare.py --a A1/results.json A2/results.json --b B1/results.json B2/results.json [--top 15]
                                [--of vllm]"""
import argparse
import json
import math
import sys
from collections import defaultdict


def time_of(scenario, of):
    """Our time, or baseline `of`'s (a number, or a record with "us", as results.json keeps them)."""
    if of is None:
        return scenario.get("us")
    value = scenario.get("baselines", {}).get(of)
    return value.get("us") if isinstance(value, dict) else value


def load(paths, of=None):
    rounds = []
    for path in paths:
        with open(path) as f:
            rounds.append({s["name"]: dict(s, us=time_of(s, of)) for s in json.load(f)["scenarios"]
                           if s.get("correct") and time_of(s, of)})
    return rounds


def geo(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", nargs="+", required=True, help="results.json of variant A's rounds")
    ap.add_argument("--b", nargs="+", required=True, help="results.json of variant B's rounds")
    ap.add_argument("--top", type=int, default=15, help="scenarios to list at each end")
    ap.add_argument("--of", default=None, help="a baseline's times (results.json baselines key) instead of ours")
    args = ap.parse_args()
    a_rounds, b_rounds = load(args.a, args.of), load(args.b, args.of)
    names = set.intersection(*(set(r) for r in a_rounds + b_rounds))
    if not names:
        print("no scenario that every round ran correctly")
        return 1
    rows, families = [], defaultdict(list)
    for name in sorted(names):
        a = geo([r[name]["us"] for r in a_rounds])
        b = geo([r[name]["us"] for r in b_rounds])
        rows.append((b / a, name, a, b))
        families[a_rounds[0][name]["family"]].append(b / a)
    print(f"B / A time{'' if args.of is None else ' of ' + args.of} over {len(rows)} scenarios "
          f"({len(a_rounds)} rounds of A, {len(b_rounds)} of B): "
          f"geomean {geo([r[0] for r in rows]):.4f}")
    if len(a_rounds) >= 2:
        drift = [abs(math.log(a_rounds[0][n]["us"] / a_rounds[1][n]["us"])) for n in names]
        print(f"noise floor: A round 1 against round 2, mean |log ratio| {sum(drift) / len(drift):.4f}")
    for family, ratios in sorted(families.items()):
        print(f"  {family:16s} {geo(ratios):.4f}  n={len(ratios)}")
    rows.sort()
    print("B faster:")
    for ratio, name, a, b in rows[:args.top]:
        print(f"  {ratio:.3f}  {name:60s} {a:10.1f} -> {b:10.1f} us")
    print("B slower:")
    for ratio, name, a, b in rows[-args.top:][::-1]:
        print(f"  {ratio:.3f}  {name:60s} {a:10.1f} -> {b:10.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
