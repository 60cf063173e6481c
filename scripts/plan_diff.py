#!/usr/bin/env python3
"""Which launch plans an experiment token changes, on the CPU: the grid's calls through validate() and make_plan()
(bench/host/plan_probe.cpp, built as `plan_probe`) under each FLASHSEEK_EXPERIMENT value, side by side.

    scripts/plan_diff.py default no-kam2-splits                   # every grid scenario that plans differently
    scripts/plan_diff.py default kam2-split2 --family decode-paged --all
    scripts/plan_diff.py default tile=5 --probe build/test/plan_probe

Before an A/B, the plans it would time differently; after adopting a token, whether the default now equals the
token's plans. Needs no torch and no GPU. How a scenario becomes a call: its q / KV dtypes, layout, page size,
lengths, heads, head dims, mask, soft cap, sinks, split count, q_v and context-parallel size, as the Python API
passes them. A cascade is its two passes (the shared prefix for every query, then each sequence's own keys); a
flash_attn_with_kvcache call is planned as the varlen call it becomes (q's lengths after an append).
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from flashseek.testing.grid import grid, select  # noqa: E402


def _call_words(s, name, seqs, causal, suffix_keys=None):
    qs = [q for q, _ in seqs]
    ks = [k for _, k in seqs]
    left, right = s.window
    words = {
        "name": name, "q": s.dtype, "kv": s.cache_dtype, "layout": s.kv_layout, "page": s.page_size,
        "b": len(seqs), "total_q": max(sum(qs), 1), "max_q": max(max(qs), 1), "max_k": max(max(ks), 1),
        "hq": s.num_heads_q, "hkv": s.num_heads_kv, "d": s.head_dim, "dv": s.head_dim_v,
        "causal": int(causal), "wl": left, "wr": right, "softcap": s.softcap, "sinks": int(s.sinks),
        "splits": s.num_splits, "q_v": int(s.q_v), "cp": s.cp_world_size, "gap": s.kv_gap,
    }
    return " ".join(f"{k}={v}" for k, v in words.items())


def call_lines(s):
    """The probe's input lines for one scenario (two for a cascade)."""
    if s.entry == "cascade" and s.cascade_prefix > 0:
        total_q = sum(q for q, _ in s.seqs)
        prefix = [(total_q, s.cascade_prefix)]
        suffix = [(q, k - s.cascade_prefix) for q, k in s.seqs]
        return [_call_words(s, s.name + "#prefix", prefix, causal=False),
                _call_words(s, s.name + "#suffix", suffix, causal=s.causal)]
    return [_call_words(s, s.name, s.seqs, s.causal)]


def plans(probe, experiment, lines):
    env = dict(os.environ)
    env.pop("FLASHSEEK_EXPERIMENT", None)
    if experiment != "default":
        env["FLASHSEEK_EXPERIMENT"] = experiment
    proc = subprocess.run([str(probe)], input="\n".join(lines) + "\n", env=env, capture_output=True, text=True,
                          check=True)
    sys.stderr.write(proc.stderr)  # the library names tokens it does not know
    result = {}
    for line in proc.stdout.splitlines():
        name, _, plan = line.partition(" ")
        result[name] = plan
    return result


def find_probe(given):
    if given:
        return Path(given)
    for candidate in (ROOT / "build" / "test" / "plan_probe", ROOT / "build" / "plan_probe"):
        if candidate.exists():
            return candidate
    raise SystemExit("plan_probe not found: build it (cmake --build build --target plan_probe) or pass --probe")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiments", nargs=2, metavar="EXPERIMENT", help="'default' (unset) or a token list")
    ap.add_argument("--grid", default="all", choices=("all", "perf", "operator"))
    ap.add_argument("--family", help="comma-separated families")
    ap.add_argument("--filter", help="a name substring or regex (as the evaluator's --filter)")
    ap.add_argument("--probe", help="the plan_probe executable (default: build/test/plan_probe)")
    ap.add_argument("--all", action="store_true", help="print every plan, not only the ones that differ")
    args = ap.parse_args(argv)

    scenarios = select(grid(args.grid), args.family.split(",") if args.family else None, args.filter)
    lines = [line for s in scenarios for line in call_lines(s)]
    names = [line.split(" ", 1)[0][len("name="):] for line in lines]
    probe = find_probe(args.probe)
    a, b = (plans(probe, e, lines) for e in args.experiments)
    differ = [n for n in names if a.get(n) != b.get(n)]
    width = max((len(n) for n in names), default=0)
    for n in (names if args.all else differ):
        mark = "*" if n in differ else " "
        print(f"{mark} {n:{width}s}  {a.get(n)}")
        if n in differ:
            print(f"  {'':{width}s}  {b.get(n)}")
    print(f"{len(differ)} of {len(names)} calls plan differently under {args.experiments[1]!r} than under "
          f"{args.experiments[0]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
