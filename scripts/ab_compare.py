#!/usr/bin/env python3
"""Compare evaluator runs of two variants, A and B, taken in alternating rounds (scripts/gpu-run.sh ab:...).
Per scenario: B's time over A's, each the geometric mean of its rounds' medians; per family and overall the
geometric mean of those ratios; and the noise floor: A's round-to-round ratio (|log| mean), the size of a change
that one pair of rounds cannot tell from nothing. Only scenarios both variants ran correctly count.
  python3 scripts/ab_compare.py --a A1/results.json A2/results.json --b B1/results.json B2/results.json [--top 15]"""
import argparse
import json
import math
import sys
from collections import defaultdict


def load(paths):
    rounds = []
    for path in paths:
        with open(path) as f:
            rounds.append({s["name"]: s for s in json.load(f)["scenarios"]
                           if s.get("correct") and s.get("us")})
    return rounds


def geo(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", nargs="+", required=True, help="results.json of variant A's rounds")
    ap.add_argument("--b", nargs="+", required=True, help="results.json of variant B's rounds")
    ap.add_argument("--top", type=int, default=15, help="scenarios to list at each end")
    args = ap.parse_args()
    a_rounds, b_rounds = load(args.a), load(args.b)
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
    print(f"B / A time over {len(rows)} scenarios ({len(a_rounds)} rounds of A, {len(b_rounds)} of B): "
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
