#!/usr/bin/env python3
"""Reports, per forward-attention kernel, how much softmax work runs while a P*V wgmma is in flight.

For each group of P*V HGMMAs (A operand from registers: `HGMMA... Rd, Ra, gdesc...`; the group ends with the
one that sets gsb0), it finds the first `WARPGROUP.DEPBAR.LE gsb0, 0x0` after it in program order (the wait that
retires the group) and counts the MUFU.EX2 (softmax exponentials) and all instructions in between. The loop's
group is the one followed by the most instructions; with the intended overlap, the exponentials of the next
block (block_n / 2 per thread plus 2 for the corrections) sit between the P*V issue and its wait.

  scripts/sass_overlap.py FILE [FILE...]        FILE: an object/binary (cuobjdump --dump-sass is run) or a .sass
  options: --filter SUBSTR (kernel names to report; default attention_fwd_kernel), --all (every group)
"""
import argparse
import os
import re
import subprocess
import sys

from check_sass import find_tool  # noqa: E402  (same folder: the one tool lookup)

HGMMA_RS = re.compile(r"HGMMA\.\S+\s+R\d+,\s+R\d+,\s+gdesc")


def read_sass(path):
    if path.endswith(".sass") or path.endswith(".txt"):
        return open(path).read()
    tool = find_tool("cuobjdump")
    if tool is None:
        sys.exit("cuobjdump not found")
    nvdisasm = find_tool("nvdisasm")
    env = dict(os.environ)
    if nvdisasm:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([tool, "--dump-sass", path], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"cuobjdump failed on {path}: {r.stderr.strip()}")
    return r.stdout


def kernels(sass):
    current, body = None, []
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            if current:
                yield current, body
            current, body = m.group(1), []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if current and m:
            body.append((int(m.group(1), 16), m.group(2).strip()))
    if current:
        yield current, body


def short_name(mangled):
    # FwdKernelTraits<Element, D, Dv, BlockM[, ...]>: pull the integer template arguments out of the mangling.
    ints = re.findall(r"Li(\d+)E", mangled)
    bools = re.findall(r"Lb([01])E", mangled)
    elem = "bf16" if "nv_bfloat16" in mangled else ("fp16" if "__half" in mangled else "?")
    s = f"{elem} " + "x".join(ints)
    if bools:
        s += " b" + "".join(bools)
    return s


def analyse(body):
    groups = []
    i = 0
    while i < len(body):
        addr, ins = body[i]
        if HGMMA_RS.search(ins):
            start = i
            while i < len(body) and not ("HGMMA" in body[i][1] and "gsb0" in body[i][1]):
                i += 1
            end = i  # the HGMMA that closes the group
            mufu = n = 0
            depbar = None
            for j in range(end + 1, len(body)):
                if re.search(r"WARPGROUP\.DEPBAR\.LE\s+gsb0,\s*0x0\b", body[j][1]):
                    depbar = body[j][0]
                    break
                n += 1
                if "MUFU.EX2" in body[j][1]:
                    mufu += 1
            groups.append({"pv_at": body[start][0], "pv_end": body[end][0], "depbar": depbar, "ex2": mufu,
                           "instrs": n})
        i += 1
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--filter", default="attention_fwd_kernel")
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    for path in args.files:
        for name, body in kernels(read_sass(path)):
            if args.filter not in name:
                continue
            groups = analyse(body)
            if not groups:
                print(f"{short_name(name):24s} no P*V group")
                continue
            loop = max(groups, key=lambda g: g["instrs"])
            ex2_total = sum("MUFU.EX2" in ins for _, ins in body)
            print(f"{short_name(name):24s} loop P*V @{loop['pv_end']:#x}: {loop['ex2']:3d} MUFU.EX2 "
                  f"({loop['instrs']} instrs) before its DEPBAR 0 @{loop['depbar'] or 0:#x}; "
                  f"{len(body)} instrs, {ex2_total} EX2 in kernel")
            if args.all:
                for g in groups:
                    print(f"    P*V {g['pv_at']:#x}-{g['pv_end']:#x}: {g['ex2']} EX2, {g['instrs']} instrs, "
                          f"DEPBAR 0 @{(g['depbar'] or 0):#x}")


if __name__ == "__main__":
    main()
