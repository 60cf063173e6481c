#!/usr/bin/env python3
"""Decode of one long sequence (L70t8: 8/1 heads, d128, page 16) at several num_splits, and the combine's share:
where does the time of the split path go?"""
import torch
from triton.testing import do_bench

import flashseek

torch.manual_seed(0)
for seqlen_k, hq, hkv in ((32768, 8, 1), (32768, 32, 8), (131072, 8, 1)):
    page = 16
    pages = seqlen_k // page
    kc = torch.randn(pages, page, hkv, 128, device="cuda", dtype=torch.bfloat16)
    vc = torch.randn_like(kc)
    table = torch.randperm(pages, device="cuda", dtype=torch.int32).view(1, pages)
    q = torch.randn(1, hq, 128, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, 1], device="cuda", dtype=torch.int32)
    used = torch.tensor([seqlen_k], device="cuda", dtype=torch.int32)
    out = torch.empty_like(q)
    mb = 2 * seqlen_k * hkv * 128 * 2 / 1e6
    line = []
    for splits in (1, 8, 16, 32, 64, 128, 0):
        f = lambda: flashseek.flash_attn_varlen_func(q, kc, vc, 1, cu, seqlen_k, seqused_k=used, block_table=table,
                                                    causal=True, out=out, num_splits=splits)
        t = do_bench(f, warmup=20, rep=100, return_mode="median") * 1e3
        line.append(f"s{splits}={t:.1f}us({mb / t * 1e3:.0f}GB/s)")
    print(f"q1s{seqlen_k} {hq}/{hkv}: " + " ".join(line))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        flashseek.flash_attn_varlen_func(q, kc, vc, 1, cu, 131072, seqused_k=used, block_table=table, causal=True,
                                         out=out, num_splits=0)
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=6))
