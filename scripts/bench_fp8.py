#!/usr/bin/env python3
"""fp8 against bf16 on the same shapes: decode at >= 8k keys (the goal: fp8 time <= 0.55 x bf16 time, the
memory-bound ratio of half the bytes plus 10%), and prefill for information. Three variants per shape: bf16 q/k/v,
e4m3 q/k/v with (B, Hkv) stride-0 descales (vLLM's call), and a bf16 q against the e4m3 cache. Paged cache, page
16, CUDA-event timing through triton.testing.do_bench (median, L2 flushed between repeats). Exits 1 when a decode
shape misses the goal."""
import sys

import torch
from triton.testing import do_bench

import flashseek

dev = "cuda"
GOAL = 0.55
FP8 = torch.float8_e4m3fn


def _time(fn):
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3  # us


def _paged(batch, seqlen_k, hkv, d, page=16):
    pages = (seqlen_k + page - 1) // page
    num_blocks = batch * pages
    kc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    vc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    table = torch.randperm(num_blocks, device=dev, dtype=torch.int32).view(batch, pages)
    return kc, vc, table


def run_shape(name, batch, seqlen_q, seqlen_k, hq, hkv, d, decode):
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
    print(f"{name:26s} " + " | ".join(parts) + verdict)
    return ok


def main():
    reason = flashseek.unavailable_reason()
    if reason:
        print("SKIP:", reason)
        return 0
    torch.manual_seed(0)
    ok = True
    print(f"decode (goal: e4m3 time <= {GOAL} x bf16)")
    for name, b, sk, hq, hkv, d in [("L8 128q1s8k", 128, 8192, 32, 8, 128), ("L70t8 64q1s8k", 64, 8192, 8, 1, 128),
                                    ("L8 16q1s16k", 16, 16384, 32, 8, 128), ("L70t8 4q1s64k", 4, 65536, 8, 1, 128),
                                    ("L70t8 q1s32k", 1, 32768, 8, 1, 128), ("OSSt8 128q1s8k", 128, 8192, 8, 1, 64),
                                    ("G9 64q1s8k d256", 64, 8192, 16, 8, 256)]:
        ok &= run_shape(name, b, 1, sk, hq, hkv, d, decode=True)
    print("prefill (information)")
    for name, b, s, hq, hkv, d in [("L8 q8k", 1, 8192, 32, 8, 128), ("G9 2q4k d256", 2, 4096, 16, 8, 256),
                                   ("OSS q8k d64", 1, 8192, 64, 8, 64)]:
        run_shape(name, b, s, s, hq, hkv, d, decode=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
