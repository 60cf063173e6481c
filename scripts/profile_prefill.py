#!/usr/bin/env python3
"""One prefill call (d128, 32/8 heads, 8k tokens, non-causal) for ncu to profile: warm-up, then the launch the
profiler captures (ncu --launch-skip 3 --launch-count 1 -k regex:attention_fwd)."""
import torch

import flashseek

seqlen, hq, hkv, d = 8192, 32, 8, 128
q = torch.randn(seqlen, hq, d, device="cuda", dtype=torch.bfloat16)
k = torch.randn(seqlen, hkv, d, device="cuda", dtype=torch.bfloat16)
v = torch.randn(seqlen, hkv, d, device="cuda", dtype=torch.bfloat16)
cu = torch.tensor([0, seqlen], device="cuda", dtype=torch.int32)
for _ in range(5):
    flashseek.flash_attn_varlen_func(q, k, v, seqlen, cu, seqlen, cu_seqlens_k=cu, causal=False)
torch.cuda.synchronize()
