#!/usr/bin/env python3
"""fp8 against bf16 on the same shapes: decode at >= 8k keys (the goal: fp8 time <= 0.55 x bf16 time, the
memory-bound ratio of half the bytes plus 10%), and prefill for information. Three variants per shape: bf16 q/k/v,
e4m3 q/k/v with (B, Hkv) stride-0 descales (vLLM's call), and a bf16 q against the e4m3 cache. Paged cache, page
16, CUDA-event timing through triton.testing.do_bench (median, L2 flushed between repeats). Exits 1 when a decode
shape misses the goal.

Usage: bench_fp8.py [VALUE ...]. Each VALUE is a FLASHSEEK_EXPERIMENT setting ("default" = unset; tokens joined by
",", e.g. fp8-cp16 or fp8-cp16,fp8-nocvt), timed in its own subprocess (the library reads the variable once per
process). The bf16 time of a shape does not depend on the fp8 tokens, so it is measured once per value anyway
(same process, same conditions) and each line prints e4m3 / bf16 for that value; the summary at the end shows
the ratio per shape and value side by side. --quick (the default with several values) uses fewer repeats so that
~6 values fit in ~60 s. Exit 1 when the first value misses the decode goal on any shape (diagnostic tokens,
fp8-nocvt / fp8-nocopy, give wrong results and are never judged)."""
import json
import os
import subprocess
import sys

import torch
from triton.testing import do_bench

import flashseek

dev = "cuda"
GOAL = 0.55
FP8 = torch.float8_e4m3fn


REP_MS = int(os.environ.get("BENCH_FP8_REP_MS", "300"))


def _time(fn):
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=max(10, REP_MS // 6), rep=REP_MS, return_mode="median") * 1e3  # us


def _paged(batch, seqlen_k, hkv, d, page=16):
    pages = (seqlen_k + page - 1) // page
    num_blocks = batch * pages
    kc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    vc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    table = torch.randperm(num_blocks, device=dev, dtype=torch.int32).view(batch, pages)
    return kc, vc, table


def run_shape(name, batch, seqlen_q, seqlen_k, hq, hkv, d, decode, results):
    kc, vc, table = _paged(batch, seqlen_k, hkv, d)
    q = torch.randn(batch * seqlen_q, hq, d, device=dev, dtype=torch.bfloat16)
    cu_q = torch.arange(0, batch + 1, device=dev, dtype=torch.int32) * seqlen_q
    used = torch.full((batch,), seqlen_k, device=dev, dtype=torch.int32)
    scale = torch.tensor([0.8], device=dev).expand(batch, hkv)  # vLLM: layer scale expanded, stride 0
    variants = {
        "bf16": (q, kc, vc, {}),
        "e4m3": (q.to(FP8), kc.to(FP8), vc.to(FP8), dict(q_descale=scale, k_descale=scale, v_descale=scale)),
        "bf16q+e4m3kv": (q, kc.to(FP8), vc.to(FP8), dict(k_descale=scale, v_descale=scale)),
    }
    times = {}
    for label, (qq, kk, vv, extra) in variants.items():
        out = torch.empty(qq.shape, device=dev, dtype=torch.bfloat16)
        fn = lambda: flashseek.flash_attn_varlen_func(qq, kk, vv, seqlen_q, cu_q, seqlen_k, seqused_k=used,
                                                     block_table=table, causal=True, out=out, **extra)
        times[label] = _time(fn)
    base = times["bf16"]
    kv_bytes = {"bf16": 2, "e4m3": 1, "bf16q+e4m3kv": 1}
    parts = []
    for label, t in times.items():
        gbps = 2 * batch * seqlen_k * hkv * d * kv_bytes[label] / t / 1e3
        parts.append(f"{label} {t:8.1f} us {gbps:5.0f} GB/s x{t / base:4.2f}")
    ok = not decode or times["e4m3"] <= GOAL * base
    verdict = "" if not decode else (" ok" if ok else f" MISSES goal {GOAL}")
    print(f"{name:26s} " + " | ".join(parts) + verdict, flush=True)
    results[name] = {label: t for label, t in times.items()}
    return ok


DECODE = [("L8 128q1s8k", 128, 8192, 32, 8, 128), ("L70t8 64q1s8k", 64, 8192, 8, 1, 128),
          ("L8 16q1s16k", 16, 16384, 32, 8, 128), ("L70t8 4q1s64k", 4, 65536, 8, 1, 128),
          ("L70t8 q1s32k", 1, 32768, 8, 1, 128), ("OSSt8 128q1s8k", 128, 8192, 8, 1, 64),
          ("G9 64q1s8k d256", 64, 8192, 16, 8, 256)]
PREFILL = [("L8 q8k", 1, 8192, 32, 8, 128), ("G9 2q4k d256", 2, 4096, 16, 8, 256), ("OSS q8k d64", 1, 8192, 64, 8, 64)]


def measure():
    """One process, one FLASHSEEK_EXPERIMENT: every shape; the times as JSON on the last line."""
    reason = flashseek.unavailable_reason()
    if reason:
        print("SKIP:", reason)
        return 0
    torch.manual_seed(0)
    ok = True
    results = {}
    print(f"decode (goal: e4m3 time <= {GOAL} x bf16)")
    for name, b, sk, hq, hkv, d in DECODE:
        ok &= run_shape(name, b, 1, sk, hq, hkv, d, decode=True, results=results)
    print("prefill (information)")
    for name, b, s, hq, hkv, d in PREFILL:
        run_shape(name, b, s, s, hq, hkv, d, decode=False, results=results)
    print("RESULTS " + json.dumps({"ok": ok, "times": results}), flush=True)
    return 0 if ok else 1


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if os.environ.get("BENCH_FP8_CHILD") == "1" or not args:
        return measure()
    env_rep = "60" if ("--quick" in argv or len(args) > 1) and "--full" not in argv else str(REP_MS)
    summary = {}
    status = 0
    for i, value in enumerate(args):
        env = dict(os.environ, BENCH_FP8_CHILD="1", BENCH_FP8_REP_MS=os.environ.get("BENCH_FP8_REP_MS", env_rep))
        env.pop("FLASHSEEK_EXPERIMENT", None)
        if value != "default":
            env["FLASHSEEK_EXPERIMENT"] = value
        print(f"=== FLASHSEEK_EXPERIMENT={value}", flush=True)
        proc = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, capture_output=True, text=True)
        lines = proc.stdout.splitlines()
        for line in lines:
            if not line.startswith("RESULTS "):
                print(line)
        if proc.returncode == 0 and any(l.startswith("SKIP:") for l in lines):
            return 0
        if proc.returncode not in (0, 1) or not any(l.startswith("RESULTS ") for l in lines):
            print(f"FAILED (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
            status = 2
            continue
        data = json.loads([l for l in lines if l.startswith("RESULTS ")][-1][len("RESULTS "):])
        summary[value] = data["times"]
        diagnostic = "fp8-nocvt" in value or "fp8-nocopy" in value
        if i == 0 and not data["ok"] and not diagnostic and status == 0:
            status = 1
    if summary:
        values = list(summary)
        names = [n for n, *_ in DECODE + PREFILL]
        print("\n=== e4m3 time / bf16 time per value (decode goal <= %.2f); [bf16q+e4m3kv / bf16]" % GOAL)
        print(f"{'shape':26s} " + " ".join(f"{v[:22]:>24s}" for v in values))
        for n in names:
            cells = []
            for v in values:
                t = summary[v].get(n)
                cells.append(f"{t['e4m3'] / t['bf16']:5.2f} [{t['bf16q+e4m3kv'] / t['bf16']:5.2f}]" if t else "-")
            print(f"{n:26s} " + " ".join(f"{c:>24s}" for c in cells))
        print(f"{'e4m3 us, first decode':26s} " + " ".join(
            f"{summary[v][names[0]]['e4m3']:>24.1f}" if names[0] in summary[v] else f"{'-':>24s}" for v in values))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
