#!/usr/bin/env python3
"""Warp stall samples of an ncu source page (`--print-source sass` CSV, as scripts/ncu_report.sh saves it) summed by
CUDA source line, from a cubin of the same kernel built here with -lineinfo (the same nvcc and flags, so the same
SASS; the script checks that instruction by instruction). The GPU build carries no line info; this maps it offline.
  nvcc ... -lineinfo -cubin -x cu src/sm90/inst/<tile>.cu -o k.cubin
  python3 scripts/ncu_lines.py REP.source.csv[.gz] k.cubin [--top 30] [--function SUBSTRING]
Prints the match rate, then the top source lines by all samples (the innermost location; for a primitive, also its
first caller outside prims/), with the not-issued samples and the executed instructions."""
import argparse
import collections
import csv
import gzip
import io
import os
import re
import subprocess
import sys


def read_csv(path):
    opener = gzip.open if path.endswith(".gz") else open
    text = opener(path, "rt", errors="replace").read()
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"Address"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    out = []
    for r in rows[1:]:
        if len(r) < len(head) or not r[0].startswith("0x"):
            continue
        def num(name):
            try:
                return float(r[col[name]].replace(",", "")) if name in col else 0.0
            except ValueError:
                return 0.0
        out.append((int(r[0], 16), r[col["Source"]].strip(), num("Warp Stall Sampling (All Samples)"),
                    num("Warp Stall Sampling (Not-issued Samples)"), num("Instructions Executed")))
    return out


def _short(path):
    return os.path.normpath(path.split("/src/")[-1])


def disasm(cubin, function):
    """{offset: (location, sass)}: location is the innermost source line, with the first caller outside prims/ when
    the innermost is a primitive (an mbarrier wait in the consumer or in the producer: consumer.h:357 / producer.h:144)."""
    text = subprocess.run(["nvdisasm", "--print-line-info-inline", "-c", cubin], capture_output=True, text=True,
                          check=True).stdout
    sections = re.split(r"\n\s*\.section\s+\.text\.", text)
    chosen = [s for s in sections[1:] if function is None or function in s.split(",")[0]]
    if len(chosen) != 1:
        sys.exit(f"{len(chosen)} functions match {function!r}; pass --function")
    where = None
    chain = []  # the comment block above the next instruction: innermost first
    table = {}
    for line in chosen[0].splitlines():
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            chain.append((_short(m.group(1)), int(m.group(2))))
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if not m:
            continue
        if chain:
            inner = chain[0]
            caller = next((c for c in chain[1:] if not c[0].startswith("sm90/prims/")), None)
            where = (f"{inner[0]}:{inner[1]}" + (f" <- {caller[0]}:{caller[1]}"
                                                   if inner[0].startswith("sm90/prims/") and caller else ""))
            chain = []
        if where is not None:
            table[int(m.group(1), 16)] = (where, m.group(2).strip())
    return table


def opcode(sass):
    """The instruction's opcode without its predicate (branch targets, .reuse and spacing differ between the two)."""
    tokens = sass.strip().rstrip(";").split()
    if tokens and tokens[0].startswith("@"):
        tokens = tokens[1:]
    return tokens[0] if tokens else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("cubin")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--function", default=None)
    args = ap.parse_args()
    rows = read_csv(args.csv)
    table = disasm(args.cubin, args.function)
    base = rows[0][0]
    same = 0
    by_line = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    total = sum(r[2] for r in rows)
    for addr, sass, samples, not_issued, executed in rows:
        entry = table.get(addr - base)
        if entry is None:
            continue
        where, text = entry
        if opcode(text) == opcode(sass):
            same += 1
        acc = by_line[where]
        acc[0] += samples
        acc[1] += not_issued
        acc[2] += executed
    print(f"{len(rows)} SASS rows, {len(table)} in the cubin, {same} with the same opcode at the same offset; "
          f"{total:.0f} samples")
    print(f"{'samples':>8} {'%':>6} {'not-iss':>8} {'executed':>10}  source line")
    for where, (s, n, e) in sorted(by_line.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{s:8.0f} {100 * s / max(total, 1):5.1f}% {n:8.0f} {e:10.0f}  {where}")


if __name__ == "__main__":
    main()
