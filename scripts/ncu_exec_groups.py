#!/usr/bin/env python3
"""Executed warp instructions of one kernel's ncu source page (`--print-source sass` CSV, as scripts/ncu_report.sh
saves it), grouped by how often each instruction ran. Two kernels that do the same work (ours and a baseline's on
one scenario) then line up group by group: the main loop's body is the group of the loop's HGMMA count, the
once-a-tile code the group of the tile count, and what one kernel runs that the other does not stands out as its
own groups (perf-log entry 71: 16q512's epilogue store loop and Q copies).
  python3 scripts/ncu_exec_groups.py REP.source.csv[.gz] [OTHER.source.csv[.gz]] [--top 12]
Prints per file: the total, the instruction count of each HGMMA group, the largest groups (count x instructions =
executed) and the opcode mix of the largest ones."""
import argparse
import collections
import csv
import gzip
import io


def read_rows(path):
    """(opcode, executed) per SASS row of the source page."""
    opener = gzip.open if path.endswith(".gz") else open
    lines = opener(path, "rt", errors="replace").read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    col = {name: i for i, name in enumerate(rows[0])}
    out = []
    for r in rows[1:]:
        if len(r) < len(rows[0]) or not r[0].startswith("0x"):
            continue
        tokens = r[col["Source"]].split()
        if tokens and tokens[0].startswith("@"):
            tokens = tokens[1:]
        op = tokens[0].split(".")[0] if tokens else "?"
        try:
            executed = int(float(r[col["Instructions Executed"]].replace(",", "") or 0))
        except ValueError:
            executed = 0
        out.append((op, executed))
    return out


def groups(rows):
    """{execution count: [opcodes]} over the rows that ran."""
    by = collections.defaultdict(list)
    for op, executed in rows:
        if executed > 0:
            by[executed].append(op)
    return by


def summarize(path, top):
    rows = read_rows(path)
    by = groups(rows)
    total = sum(n * len(ops) for n, ops in by.items())
    lines = [f"{path}: {total / 1e6:.2f}M warp instructions executed"]
    hgmma = sorted((n, len(ops)) for n, ops in by.items() if "HGMMA" in ops)
    for n, count in hgmma:
        lines.append(f"  HGMMA group: {count:5d} instructions run {n} times each")
    ranked = sorted(by.items(), key=lambda kv: -kv[0] * len(kv[1]))[:top]
    for n, ops in ranked:
        mix = ", ".join(f"{op} {k}" for op, k in collections.Counter(ops).most_common(6))
        lines.append(f"  {n:9d} x {len(ops):5d} = {n * len(ops) / 1e6:7.2f}M   {mix}")
    return total, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    totals = []
    for path in args.csv:
        total, lines = summarize(path, args.top)
        totals.append(total)
        print("\n".join(lines))
    if len(totals) == 2 and totals[1] > 0:
        print(f"ratio first / second: {totals[0] / totals[1]:.3f}")


if __name__ == "__main__":
    main()
