#!/usr/bin/env python3
"""Fails unless every forward-attention kernel in the given binaries runs on the tensor cores.

Disassembles with cuobjdump and checks, per kernel whose name contains attention_fwd_kernel or mla_decode_kernel
(FORWARD_KERNELS): at least one
HGMMA instruction (wgmma), and no local-memory traffic (LDL/STL: a spilled or run-time-indexed register array).
Exits 77 (a skip for ctest) when no cuobjdump is found, with the reason.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

FORWARD_KERNELS = ("attention_fwd_kernel", "mla_decode_kernel")


def find_tool(name):
    candidates = [shutil.which(name), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", name)]
    for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        candidates.append(os.path.join(site, "nvidia", "cu13", "bin", name))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def main(paths):
    cuobjdump = find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    if cuobjdump is None or nvdisasm is None:
        print("SKIP: cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 77
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    kernels = {}
    for path in paths:
        sass = subprocess.run([cuobjdump, "--dump-sass", path], capture_output=True, text=True, env=env)
        if sass.returncode != 0:
            print(f"FAIL: cuobjdump on {path}: {sass.stderr.strip()}")
            return 1
        current = None
        for line in sass.stdout.splitlines():
            m = re.match(r"\s*Function : (\S+)", line)
            if m:
                current = m.group(1)
                kernels.setdefault(current, {"HGMMA": 0, "LDL": 0, "STL": 0})
                continue
            if current is None:
                continue
            for op in ("HGMMA", "LDL", "STL"):
                if re.search(rf"\b{op}\b", line):
                    kernels[current][op] += 1
    fwd = {k: v for k, v in kernels.items() if any(tag in k for tag in FORWARD_KERNELS)}
    if not fwd:
        print("FAIL: no forward kernel (" + ", ".join(FORWARD_KERNELS) + ") found in", " ".join(paths))
        return 1
    failed = False
    for name, counts in sorted(fwd.items()):
        ok = counts["HGMMA"] > 0 and counts["LDL"] == 0 and counts["STL"] == 0
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} HGMMA={counts['HGMMA']:4d} LDL={counts['LDL']} STL={counts['STL']}  {name}")
    print(f"{len(fwd)} forward kernels checked")
    for tag in FORWARD_KERNELS:
        if not any(tag in k for k in fwd):
            print(f"FAIL: no {tag} found")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: check_sass.py BINARY [BINARY...]")
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
