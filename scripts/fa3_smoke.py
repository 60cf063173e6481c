#!/usr/bin/env python3
"""Seconds-long check that the FA3 baseline (vllm.vllm_flash_attn, fa_version=3) loads and computes attention here:
one varlen prefill call (GQA, bottom-right causal) and one paged decode call (block_table, scheduler_metadata,
num_splits), each against torch SDPA per sequence, plus the paged decode with sinks (s_aux, bf16) against an fp32
reference. Independent of flashseek. On a machine without vLLM, first unpack the carry:

    bash .fa3/unpack.sh && export PYTHONPATH=/tmp/fa3:$PYTHONPATH && python scripts/fa3_smoke.py

Prints one line per call with the max abs error; exits 1 if a call fails or an error exceeds 2e-2."""
import sys
import time

import torch
import torch.nn.functional as F

TOL = 2e-2


def sdpa_ref(q, k, v, causal, scale):
    """q (Sq, Hq, d), k/v (Sk, Hkv, d) -> (Sq, Hq, d); causal aligned bottom-right (explicit mask)."""
    sq, sk = q.shape[0], k.shape[0]
    mask = None
    if causal:
        i = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
        mask = torch.arange(sk, device=q.device)[None, :] <= i
    o = F.scaled_dot_product_attention(q.transpose(0, 1)[None].float(), k.transpose(0, 1)[None].float(),
                                       v.transpose(0, 1)[None].float(), attn_mask=mask, scale=scale,
                                       enable_gqa=q.shape[1] != k.shape[1])
    return o[0].transpose(0, 1)


def sink_ref(q, k, v, scale, sinks):
    """Decode with sinks in fp32: the sink logit joins the softmax denominator only."""
    g = q.shape[1] // k.shape[1]
    k, v = k.float().repeat_interleave(g, dim=1), v.float().repeat_interleave(g, dim=1)
    s = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    m = torch.maximum(s.amax(-1, keepdim=True), sinks.float()[:, None, None])
    p = torch.exp(s - m)
    den = p.sum(-1, keepdim=True) + torch.exp(sinks.float()[:, None, None] - m)
    return torch.einsum("hqk,khd->qhd", p / den, v)


def main() -> int:
    t0 = time.time()
    import vllm
    from vllm.vllm_flash_attn import flash_attn_interface as fi
    from vllm.vllm_flash_attn import flash_attn_varlen_func, get_scheduler_metadata
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), {torch.cuda.get_device_name()}, "
          f"vllm {getattr(vllm, '__version__', '?')} from {vllm.__file__}")
    print(f"FA3_AVAILABLE={fi.FA3_AVAILABLE} ({fi.FA3_UNAVAILABLE_REASON}); "
          f"fa3 unsupported reason: {fi.fa_version_unsupported_reason(3)}")
    if not fi.FA3_AVAILABLE:
        return 1
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    hq, hkv, d = 32, 8, 128
    scale = d ** -0.5
    failures = 0

    def report(name, fn):
        nonlocal failures
        try:
            err = fn()
            ok = err <= TOL
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {err:.3e}")
            failures += not ok
        except Exception as exc:  # noqa: BLE001
            print(f"FAIL {name}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
            failures += 1

    # 1) varlen prefill: ragged q / k, GQA, bottom-right causal
    q_lens, k_lens = [300, 1, 77, 512], [300, 1000, 77, 700]

    def varlen():
        cu_q = torch.tensor([0] + torch.tensor(q_lens).cumsum(0).tolist(), dtype=torch.int32, device=dev)
        cu_k = torch.tensor([0] + torch.tensor(k_lens).cumsum(0).tolist(), dtype=torch.int32, device=dev)
        q = torch.randn(sum(q_lens), hq, d, device=dev, dtype=dt)
        k = torch.randn(sum(k_lens), hkv, d, device=dev, dtype=dt)
        v = torch.randn(sum(k_lens), hkv, d, device=dev, dtype=dt)
        out = flash_attn_varlen_func(q, k, v, max(q_lens), cu_q, max(k_lens), cu_seqlens_k=cu_k, softmax_scale=scale,
                                     causal=True, fa_version=3)
        err = 0.0
        for i in range(len(q_lens)):
            qs, ks = slice(cu_q[i], cu_q[i + 1]), slice(cu_k[i], cu_k[i + 1])
            ref = sdpa_ref(q[qs], k[ks], v[ks], True, scale)
            err = max(err, (out[qs].float() - ref).abs().max().item())
        return err

    report("varlen prefill (4 seqs, GQA 32/8, d128, causal)", varlen)

    # 2) paged decode: one query per sequence, shuffled pages, scheduler metadata, forced splits
    page, seqs = 16, [1, 33, 4096, 1500, 8191]
    b = len(seqs)
    n_pages = [-(-n // page) for n in seqs]
    perm = torch.randperm(sum(n_pages) + 7, device=dev)
    table = torch.zeros(b, max(n_pages), dtype=torch.int32, device=dev)
    pos = 0
    for i, n in enumerate(n_pages):
        table[i, :n] = perm[pos:pos + n].int()
        pos += n
    k_cache = torch.randn(perm.numel(), page, hkv, d, device=dev, dtype=dt)
    v_cache = torch.randn(perm.numel(), page, hkv, d, device=dev, dtype=dt)
    q = torch.randn(b, hq, d, device=dev, dtype=dt)
    cu_q = torch.arange(b + 1, dtype=torch.int32, device=dev)
    seqused = torch.tensor(seqs, dtype=torch.int32, device=dev)

    def gather(i):
        ids = table[i, :n_pages[i]].long()
        return k_cache[ids].reshape(-1, hkv, d)[:seqs[i]], v_cache[ids].reshape(-1, hkv, d)[:seqs[i]]

    def paged(num_splits, sinks=None):
        md = get_scheduler_metadata(b, 1, max(seqs), hq, hkv, d, seqused, qkv_dtype=dt, cu_seqlens_q=cu_q,
                                    page_size=page, causal=True, num_splits=num_splits)
        out = flash_attn_varlen_func(q, k_cache, v_cache, 1, cu_q, max(seqs), seqused_k=seqused, block_table=table,
                                     softmax_scale=scale, causal=True, scheduler_metadata=md, num_splits=num_splits,
                                     s_aux=sinks, fa_version=3)
        err = 0.0
        for i in range(b):
            k, v = gather(i)
            ref = sdpa_ref(q[i:i + 1], k, v, True, scale) if sinks is None else sink_ref(q[i:i + 1], k, v, scale,
                                                                                           sinks)
            err = max(err, (out[i:i + 1].float() - ref).abs().max().item())
        return err

    report("paged decode (5 seqs up to 8191, p16, metadata, num_splits=0)", lambda: paged(0))
    report("paged decode (same, num_splits=8)", lambda: paged(8))
    sinks = torch.randn(hq, device=dev).to(torch.bfloat16)
    report("paged decode with sinks (s_aux bf16, num_splits=0)", lambda: paged(0, sinks))
    torch.cuda.synchronize()
    print(f"{'all ok' if not failures else f'{failures} failed'} in {time.time() - t0:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
