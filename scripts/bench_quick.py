#!/usr/bin/env python3
"""A handful of headline shapes timed against cuDNN (PyTorch SDPA) in the same run, for kernel iteration between
evaluator runs. triton.testing.do_bench: median, L2 flushed between repeats. Prints TFLOP/s or GB/s."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

import flashseek

dev = "cuda"
torch.manual_seed(0)


def prefill(seqlen, hq, hkv, d, causal, batch=1, dtype=torch.bfloat16):
    total = batch * seqlen
    q = torch.randn(total, hq, d, device=dev, dtype=dtype)
    k = torch.randn(total, hkv, d, device=dev, dtype=dtype)
    v = torch.randn(total, hkv, d, device=dev, dtype=dtype)
    cu = torch.arange(0, total + 1, seqlen, device=dev, dtype=torch.int32)
    out = torch.empty_like(q)
    ours = lambda: flashseek.flash_attn_varlen_func(q, k, v, seqlen, cu, seqlen, cu_seqlens_k=cu, causal=causal,
                                                   out=out)
    qd = q.view(batch, seqlen, hq, d).transpose(1, 2)
    kd = k.view(batch, seqlen, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vd = v.view(batch, seqlen, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(qd, kd, vd, is_causal=causal)

    flops = 4 * batch * hq * seqlen * seqlen * d * (0.5 if causal else 1.0)
    t_ours = do_bench(ours, warmup=50, rep=300, return_mode="median")
    t_ref = do_bench(cudnn, warmup=50, rep=300, return_mode="median")
    name = f"prefill {batch}x{seqlen} {hq}/{hkv} d{d} {'causal' if causal else 'full'}"
    print(f"{name:44s} ours {flops / t_ours / 1e9:6.1f} TF/s ({t_ours * 1e3:8.1f} us)  "
          f"cudnn {flops / t_ref / 1e9:6.1f} TF/s  ratio {t_ref / t_ours:5.2f}")


def decode(batch, seqlen_k, hq, hkv, d, page=16, num_splits=0):
    pages = (seqlen_k + page - 1) // page
    num_blocks = batch * pages
    kc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    vc = torch.randn(num_blocks, page, hkv, d, device=dev, dtype=torch.bfloat16)
    table = torch.randperm(num_blocks, device=dev, dtype=torch.int32).view(batch, pages)
    q = torch.randn(batch, hq, d, device=dev, dtype=torch.bfloat16)
    cu_q = torch.arange(0, batch + 1, device=dev, dtype=torch.int32)
    used = torch.full((batch,), seqlen_k, device=dev, dtype=torch.int32)
    out = torch.empty_like(q)
    ours = lambda: flashseek.flash_attn_varlen_func(q, kc, vc, 1, cu_q, seqlen_k, seqused_k=used, block_table=table,
                                                   causal=True, out=out, num_splits=num_splits)
    kd = kc[table.long()].view(batch, pages * page, hkv, d)[:, :seqlen_k].transpose(1, 2).contiguous()
    vd = vc[table.long()].view(batch, pages * page, hkv, d)[:, :seqlen_k].transpose(1, 2).contiguous()
    qd = q.view(batch, 1, hq, d).transpose(1, 2)

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(qd, kd, vd, enable_gqa=True)

    nbytes = 2 * batch * seqlen_k * hkv * d * 2
    t_ours = do_bench(ours, warmup=50, rep=300, return_mode="median")
    t_ref = do_bench(cudnn, warmup=50, rep=300, return_mode="median")
    name = f"decode {batch}q1s{seqlen_k} {hq}/{hkv} d{d} p{page} splits={num_splits}"
    print(f"{name:44s} ours {nbytes / t_ours / 1e6:6.0f} GB/s ({t_ours * 1e3:8.1f} us)  "
          f"cudnn {nbytes / t_ref / 1e6:6.0f} GB/s  ratio {t_ref / t_ours:5.2f}")


def main():
    print(flashseek.unavailable_reason() or "flashseek available")
    prefill(8192, 32, 8, 128, causal=False)
    prefill(8192, 32, 8, 128, causal=True)
    prefill(2048, 32, 8, 128, causal=True, batch=8)
    prefill(8192, 32, 32, 64, causal=False)
    prefill(8192, 16, 16, 256, causal=False)
    prefill(8192, 16, 16, 256, causal=True)
    decode(128, 8192, 32, 8, 128)
    decode(32, 2048, 32, 8, 128)
    decode(1, 1024, 32, 8, 128)
    decode(1, 32768, 32, 8, 128)
    decode(8, 8192, 32, 8, 128, page=64)
    return 0


if __name__ == "__main__":
    sys.exit(main())
