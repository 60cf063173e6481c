#!/usr/bin/env python3
"""Top SASS lines by warp stall samples from `ncu -i REP --page source --csv --print-source sass`.

Column names differ across ncu versions, so they are found by pattern: the address column ("Address"), the SASS
text ("Source"), the total samples ("Warp Stall Sampling (All Samples)", else the first column with "Sampling"
and "All"), the not-issued samples, and every other numeric column whose name mentions a stall reason
("stall" in it, or a known reason name) as a reason column. Prints the header it found (to fix this script if
ncu named them differently), the top --top lines with their 3 largest reasons and their share of all samples,
and the samples per instruction class (opcode before the first '.').
  python3 scripts/ncu_source_top.py rep.source.csv [--top 40] [--save compact.csv] [--keep 200]
"""
import argparse
import collections
import csv
import io
import re
import sys

REASONS = ("long_scoreboard", "short_scoreboard", "barrier", "membar", "wait", "math_pipe_throttle", "mio_throttle",
           "lg_throttle", "tex_throttle", "dispatch_stall", "drain", "branch_resolving", "no_instruction", "not_selected",
           "selected", "sleeping", "misc", "imc_miss", "gmma", "tensor")


def num(x):
    try:
        return float(str(x).replace(",", ""))
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--save", default=None)
    ap.add_argument("--keep", type=int, default=200)
    args = ap.parse_args()
    text = open(args.csv, errors="replace").read()
    # ncu may print a few lines (kernel name, notes) before the CSV header: start at the first line with "Address"
    # or "Source" in quotes.
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if '"Source"' in l or '"Address"' in l or l.startswith('"#')), 0)
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    if not rows:
        sys.exit("empty source CSV")
    header, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    print(f"source CSV: {len(body)} lines, {len(header)} columns: " + " | ".join(header[:60]))

    def find(*preds):
        for p in preds:
            for i, h in enumerate(header):
                if p(h):
                    return i
        return None

    c_addr = find(lambda h: h.strip().lower() in ("address", "# address"), lambda h: "address" in h.lower())
    c_src = find(lambda h: h.strip().lower() == "source", lambda h: "source" in h.lower())
    c_all = find(lambda h: "stall sampling (all" in h.lower(), lambda h: "sampling" in h.lower() and "all" in h.lower(),
                 lambda h: "samples" in h.lower())
    c_ni = find(lambda h: "not-issued" in h.lower() or "not issued" in h.lower())
    if c_all is None:
        sys.exit("no samples column found; header above")
    reason_cols = [i for i, h in enumerate(header)
                   if i not in (c_all, c_ni, c_addr, c_src) and
                   ("stall" in h.lower() or any(r in h.lower().replace(" ", "_") for r in REASONS)) and
                   any(num(r[i]) for r in body[:2000])]
    total = sum(num(r[c_all]) or 0 for r in body) or 1.0
    body.sort(key=lambda r: -(num(r[c_all]) or 0))

    def reasons_of(r):
        vals = sorted(((num(r[i]) or 0, header[i]) for i in reason_cols), reverse=True)
        return [(h, v) for v, h in vals[:3] if v > 0]

    print(f"total samples {total:.0f}; top {args.top} SASS lines:")
    print(f"{'address':>8s} {'samples':>8s} {'%':>6s} {'not-iss':>8s}  {'instruction':60s} top reasons")
    for r in body[:args.top]:
        s = num(r[c_all]) or 0
        ni = num(r[c_ni]) if c_ni is not None else None
        rs = ", ".join(f"{re.sub(r'^.*?(stall[_ ])?', '', h)[:24]} {v:.0f}" for h, v in reasons_of(r))
        print(f"{(r[c_addr] if c_addr is not None else ''):>8s} {s:8.0f} {100 * s / total:5.1f}% "
              f"{(f'{ni:8.0f}' if ni is not None else '       -')}  {(r[c_src] if c_src is not None else '')[:60]:60s} {rs}")

    by_class = collections.Counter()
    for r in body:
        src = (r[c_src] if c_src is not None else "").strip()
        src = re.sub(r"^@!?U?P\w+\s+", "", src)
        op = src.split(" ")[0].split(".")[0] if src else "?"
        by_class[op] += num(r[c_all]) or 0
    print("samples by opcode: " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in by_class.most_common(15)))
    if reason_cols:
        tot_r = {header[i]: sum(num(r[i]) or 0 for r in body) for i in reason_cols}
        print("samples by reason: " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in
                                                sorted(tot_r.items(), key=lambda kv: -kv[1])[:12]))
    if args.save:
        keep_cols = [c for c in (c_addr, c_src, c_all, c_ni) if c is not None] + reason_cols
        with open(args.save, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([header[i] for i in keep_cols])
            for r in body[:args.keep]:
                w.writerow([r[i] for i in keep_cols])
        print(f"saved {min(args.keep, len(body))} lines to {args.save}")


if __name__ == "__main__":
    main()
