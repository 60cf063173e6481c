#!/usr/bin/env python3
"""Fails unless every forward-attention kernel in the given binaries runs on the tensor cores.

Disassembles with cuobjdump and checks, per kernel whose name contains attention_fwd_kernel or mla_decode_kernel
(FORWARD_KERNELS): at least one
HGMMA instruction (wgmma), and no local-memory traffic (LDL/STL: a spilled or run-time-indexed register array;
LOCAL_MEMORY_ALLOWANCE names the measured exceptions, each with its bound and reason).
Every forward kernel copies with cp.async (LDGSTS: query rows, partial blocks); the 16-bit ones also stream K/V
by TMA (UTMALDG), the converting fp8-cache kernels (FwdKernelTraits<..., true>) convert e4m3 in the kernel
(F2FP...E4M3 unpacks), and the native e4m3 ones (variants 200-204) multiply e4m3 (QGMMA) from TMA-loaded tiles; --min-kernels N fails when fewer kernels (of each kind) are found, so a kernel
family that silently drops out of the build is caught.
Exits 77 (a skip for ctest) when no cuobjdump is found, with the reason.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

FORWARD_KERNELS = ("attention_fwd_kernel", "attention_fwd_persistent_kernel", "mla_decode_kernel")
# Stage-skip experiment variants (sm90/kernel_traits.h LoopFlags 4..128, docs/perf-log.md entry 9) may leave
# both GEMMs out: they are held to the local-memory rule only.
STAGE_SKIP_BITS = 4 | 8 | 16 | 32 | 64 | 128


def loop_flags(mangled):
    """The kernel's kLoopFlags template argument (the int after the traits), or 0."""
    m = re.search(r"EEELi(\d+)EEEv", mangled)
    return int(m.group(1)) if m else 0


def find_tool(name):
    candidates = [shutil.which(name), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", name)]
    for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        candidates.append(os.path.join(site, "nvidia", "cu13", "bin", name))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


# SASS patterns counted per kernel: wgmma, cp.async (global -> shared), the e4m3 -> fp16 conversion, local memory.
OPS = {"HGMMA": r"\bHGMMA\b", "QGMMA": r"\bQGMMA\b", "LDGSTS": r"\bLDGSTS\b", "TMA": r"\bUTMALDG\b", "E4M3": r"F2FP\.F16\.E4M3", "LDL": r"\bLDL\b",
       "STL": r"\bSTL\b"}


# Measured kernels allowed a bounded local-memory use, each with its reason; one more LDL or STL fails. The 192-row
# d64 persistent kernel (docs/perf-log.md entry 42): its 512 threads start at 128 registers, so the producer (32)
# and the consumers (160) keep a few per-tile values (tile counters, a Q row address pair) in local memory, outside
# the key-block loop; measured 8-16% faster than the 128-row persistent kernel as it is. Debt: entry 44.
LOCAL_MEMORY_ALLOWANCE = {
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEELi3587E": 9,
    # The same kernel with tile-fastdiv (entry 64, the default since session 15; 3587 is no-tile-fastdiv): the same
    # per-tile values in local memory, fewer of them (4 against 9).
    # Entry 75's bit mask: the 160-register consumers keep one more per-tile value (a row's token) in local memory,
    # loaded at each tile's start and end, never in the key-block loop (4 -> 7; 396803 7 -> 10).
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEELi134659E": 7,
    # ... with Q by tensor-map boxes (q-tma, entry 69, run()'s choice where the boxes pay): the 32-register producer keeps its three
    # per-tile counters in local memory (all after its setmaxnreg, none in the consumers' loop).
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEELi396803E": 10,
    # The same two persistent values with the three warpgroups' round-robin turns (m192-turns, entry 81): the same
    # per-tile values in local memory, none in the key-block loop (checked: the LDL / STL sit before and after it).
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEELi1183235E": 9,
    # Entry 102's key origin (a per-tile choice in TileWork::resolve) moves one more value there at 1445379 (7 -> 8;
    # the consumers' LDL / STL still sit before and after the key-block loop) and one fewer at 396803 (10 -> 7).
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEELi1445379E": 8,
    # The 192-row native e4m3 d64 tile with fp16 P*V (fp8-f16pv, entry 78): the 32-register producer keeps the V
    # widening's two per-thread tile offsets and a loop value in local memory, reloaded once a key block (an L1 hit
    # beside the block's two TMA waits); none in the consumers.
    r"attention_fwd_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb1ELi205EE": 8,
    # ... on the persistent kernel (the default since entry 99): the same 32-register producer also carries the tile
    # loop's state, 30 LDL / 27 STL, and still runs fp8 OSS q8k w128 in 182 us against the one-tile kernel's 221.
    # The windowed tiles' key origin (entry 102, a per-tile choice in TileWork::resolve) adds one: 31 / 29, with w128
    # at 174 us. Debt: moving the per-tile state out of the producer's registers (entry 99).
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb1ELi205EEELi3587E": 31,
    # The one-block windowed d64 tile (the default since entry 103): its consumers keep everything in registers
    # (P*V serial to QK^T); the 32-register producer, which issues 22 boxes a block, spills 15 / 11 (one-tile) and
    # 33 / 26 (persistent, with the tile loop's state), and still runs OSS w128 in 126 us against 158 without it.
    r"attention_fwd_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi211EE": 15,
    r"attention_fwd_persistent_kernel.*FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi211EEELi396803E": 33,
}


def local_memory_ok(mangled, counts):
    allowed = max([n for pattern, n in LOCAL_MEMORY_ALLOWANCE.items() if re.search(pattern, mangled)], default=0)
    return counts["LDL"] <= allowed and counts["STL"] <= allowed


def is_fp8_native_kernel(mangled):
    """FwdKernelTraits<bf16, d, dv, block_m, true, kFp8NativeVariant = 200 / kFp8NativeOnePVariant = 201 /
    kFp8NativeTwoCtaVariant = 202 / kFp8NativeHeadPackVariant = 203 / kFp8NativeHeadPackTwoCtaVariant = 204>: e4m3
    wgmma (QGMMA), no conversion."""
    return re.search(r"FwdKernelTraits.*Lb1ELi20[0-4]E", mangled) is not None


def is_fp8_kernel(mangled):
    """FwdKernelTraits<Element, d, dv, block_m, true, variant>: the fp8 flag mangles as Lb1E."""
    return re.search(r"FwdKernelTraits.*Lb1E", mangled) is not None


def main(paths, min_kernels=0):
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
                kernels.setdefault(current, {op: 0 for op in OPS})
                continue
            if current is None:
                continue
            for op, pattern in OPS.items():
                if re.search(pattern, line):
                    kernels[current][op] += 1
    fwd = {k: v for k, v in kernels.items() if any(tag in k for tag in FORWARD_KERNELS)}
    if not fwd:
        print("FAIL: no forward kernel (" + ", ".join(FORWARD_KERNELS) + ") found in", " ".join(paths))
        return 1
    failed = False
    n_fp8 = 0
    for name, counts in sorted(fwd.items()):
        fp8 = is_fp8_kernel(name)
        n_fp8 += fp8
        local_ok = local_memory_ok(name, counts)
        ok = counts["HGMMA"] > 0 and local_ok and counts["LDGSTS"] > 0
        if is_fp8_native_kernel(name):
            ok = counts["QGMMA"] > 0 and counts["TMA"] > 0 and local_ok
        elif fp8:
            ok = ok and counts["E4M3"] > 0
        elif "attention_fwd" in name:
            ok = ok and counts["TMA"] > 0  # 16-bit K/V: the TMA producer (sm90/producer_tma.h)
        if loop_flags(name) & STAGE_SKIP_BITS:
            ok = local_ok
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} HGMMA={counts['HGMMA']:4d} QGMMA={counts['QGMMA']:3d} LDGSTS={counts['LDGSTS']:3d} "
              f"E4M3={counts['E4M3']:3d} TMA={counts['TMA']:2d} LDL={counts['LDL']} STL={counts['STL']}  {'fp8 ' if fp8 else ''}{name}")
    n_16 = len(fwd) - n_fp8
    print(f"{len(fwd)} forward kernels checked ({n_16} 16-bit, {n_fp8} fp8-cache)")
    if min_kernels and (n_16 < min_kernels or n_fp8 < min_kernels):
        print(f"FAIL: expected at least {min_kernels} kernels of each kind")
        failed = True
    for tag in FORWARD_KERNELS:
        if not any(tag in k for k in fwd):
            print(f"FAIL: no {tag} found")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    min_kernels = 0
    if len(args) >= 2 and args[0] == "--min-kernels":
        min_kernels = int(args[1])
        args = args[2:]
    if not args:
        print("usage: check_sass.py [--min-kernels N] BINARY [BINARY...]")
        sys.exit(2)
    sys.exit(main(args, min_kernels))
