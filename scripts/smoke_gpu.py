#!/usr/bin/env python3
"""A first-contact check of the kernels on the GPU, independent of the test suite: a dozen calls covering the
main paths (varlen / paged / batched KV, GQA, causal, window, softcap, sinks, splits, head dims, fp16), each
against a small fp32 reference written here. Prints one line per case; exits 1 if any fails."""
import math
import sys

import torch

import flashseek

torch.manual_seed(0)
dev = "cuda"


def reference(q, k, v, causal, window, softcap, scale, sinks):
    """q (Sq, Hq, d), k/v (Sk, Hkv, d) fp32 -> out (Sq, Hq, dv), lse (Hq, Sq)."""
    sq, hq, _ = q.shape
    sk, hkv, _ = k.shape
    g = hq // hkv
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    s = torch.einsum("qhd,khd->hqk", q, k) * scale
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(sq, device=q.device)[:, None]
    j = torch.arange(sk, device=q.device)[None, :]
    left, right = window
    if causal:
        right = 0
    visible = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if right >= 0:
        visible &= j <= i + sk - sq + right
    if left >= 0:
        visible &= j >= i + sk - sq - left
    s = s.masked_fill(~visible, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.float()[:, None, None].expand(hq, sq, 1)], dim=-1)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None].clamp(min=-1e30))
    p = torch.nan_to_num(p, nan=0.0)
    if sinks is not None:
        p = p[..., :-1]
    out = torch.einsum("hqk,khd->qhd", p, v)
    return out, lse


def run_case(name, seqs, hq, hkv, d, dv=None, dtype=torch.bfloat16, layout="paged", page=16, causal=True,
             window=(-1, -1), softcap=0.0, sinks=False, num_splits=0, scale=None):
    dv = dv or d
    b = len(seqs)
    total_q = sum(sq for sq, _ in seqs)
    q = torch.randn(total_q, hq, d, device=dev, dtype=dtype)
    cu_q = torch.tensor([0] + list(torch.tensor([s for s, _ in seqs]).cumsum(0)), device=dev, dtype=torch.int32)
    kv_lens = [sk for _, sk in seqs]
    kwargs = {}
    if layout == "varlen":
        total_k = sum(kv_lens)
        k = torch.randn(total_k, hkv, d, device=dev, dtype=dtype)
        v = torch.randn(total_k, hkv, dv, device=dev, dtype=dtype)
        cu_k = torch.tensor([0] + list(torch.tensor(kv_lens).cumsum(0)), device=dev, dtype=torch.int32)
        kwargs.update(cu_seqlens_k=cu_k)
        dense_k = [k[cu_k[i]:cu_k[i + 1]] for i in range(b)]
        dense_v = [v[cu_k[i]:cu_k[i + 1]] for i in range(b)]
    else:
        pages_per = [(sk + page - 1) // page for sk in kv_lens]
        num_blocks = sum(pages_per) + 7
        k = torch.full((num_blocks, page, hkv, d), float("nan"), device=dev, dtype=dtype)
        v = torch.full((num_blocks, page, hkv, dv), float("nan"), device=dev, dtype=dtype)
        perm = torch.randperm(num_blocks, device=dev)
        width = max(pages_per) + 2
        table = torch.zeros(b, width, dtype=torch.int32, device=dev)
        dense_k, dense_v = [], []
        used = 0
        for i, sk in enumerate(kv_lens):
            ids = perm[used:used + pages_per[i]]
            used += pages_per[i]
            table[i, :pages_per[i]] = ids.int()
            kk = torch.randn(sk, hkv, d, device=dev, dtype=dtype)
            vv = torch.randn(sk, hkv, dv, device=dev, dtype=dtype)
            for p_i, pid in enumerate(ids.tolist()):
                rows = slice(p_i * page, min(sk, (p_i + 1) * page))
                n = rows.stop - rows.start
                k[pid, :n] = kk[rows]
                v[pid, :n] = vv[rows]
            dense_k.append(kk)
            dense_v.append(vv)
        kwargs.update(block_table=table, seqused_k=torch.tensor(kv_lens, device=dev, dtype=torch.int32))
    s_aux = torch.randn(hq, device=dev, dtype=torch.float32) * 2 if sinks else None
    scale_v = scale if scale is not None else d ** -0.5
    out = torch.full((total_q, hq, dv), float("nan"), device=dev, dtype=dtype)
    res, lse = flashseek.flash_attn_varlen_func(
        q, k, v, max_seqlen_q=max(s for s, _ in seqs), cu_seqlens_q=cu_q, max_seqlen_k=max(kv_lens),
        softmax_scale=scale, causal=causal, window_size=list(window), softcap=softcap, return_softmax_lse=True,
        out=out, num_splits=num_splits, s_aux=s_aux, **kwargs)
    torch.cuda.synchronize()
    worst, worst_lse = 0.0, 0.0
    ok = True
    for i, (sq, sk) in enumerate(seqs):
        qs = q[cu_q[i]:cu_q[i + 1]].float()
        ro, rl = reference(qs, dense_k[i].float(), dense_v[i].float(), causal, window, softcap, scale_v, s_aux)
        o = res[cu_q[i]:cu_q[i + 1]].float()
        if not torch.isfinite(o).all():
            ok = False
            worst = float("nan")
            continue
        worst = max(worst, (o - ro).abs().max().item() if o.numel() else 0.0)
        l = lse[:, cu_q[i]:cu_q[i + 1]]
        both_inf = torch.isinf(l) & torch.isinf(rl) & (l.sign() == rl.sign())
        diff = torch.where(both_inf, torch.zeros_like(l), (l - rl).abs())
        worst_lse = max(worst_lse, diff.max().item() if diff.numel() else 0.0)
    tol = 2e-2 if dtype == torch.bfloat16 else 5e-3
    ok = ok and worst <= tol and worst_lse <= 1e-2
    print(f"{'ok  ' if ok else 'FAIL'} {name:48s} max|err| {worst:.4g} lse {worst_lse:.3g}")
    return ok


def main():
    print(flashseek.unavailable_reason() or "flashseek available")
    S1 = [(1, 1328), (5, 18), (129, 463)]
    S2 = [(1, 523), (1, 37), (1, 2011)]
    cases = [
        ("varlen prefill MHA d128 causal", dict(seqs=[(1, 1), (17, 17), (128, 128), (300, 300)], hq=4, hkv=4, d=128, layout="varlen")),
        ("varlen prefill non-causal d128", dict(seqs=[(77, 77), (256, 256)], hq=4, hkv=4, d=128, layout="varlen", causal=False)),
        ("paged S1 GQA 8/2 d128", dict(seqs=S1, hq=8, hkv=2, d=128)),
        ("paged S2 decode 8/2 d128", dict(seqs=S2, hq=8, hkv=2, d=128)),
        ("paged S1 d128 splits 4", dict(seqs=S1, hq=8, hkv=2, d=128, num_splits=4)),
        ("paged decode L8 32/8 splits heuristic", dict(seqs=[(1, 8192)], hq=32, hkv=8, d=128)),
        ("paged S1 d64", dict(seqs=S1, hq=8, hkv=2, d=64)),
        ("paged S1 d256", dict(seqs=S1, hq=8, hkv=2, d=256)),
        ("paged S1 d192/128", dict(seqs=S1, hq=8, hkv=2, d=192, dv=128)),
        ("paged S1 d72 (padded)", dict(seqs=S1, hq=8, hkv=2, d=72)),
        ("paged S1 d40 (padded)", dict(seqs=S1, hq=4, hkv=4, d=40)),
        ("paged S1 fp16 d128", dict(seqs=S1, hq=8, hkv=2, d=128, dtype=torch.float16)),
        ("paged S1 window 255", dict(seqs=S1, hq=8, hkv=2, d=128, window=(255, 0))),
        ("paged S1 softcap 50", dict(seqs=S1, hq=4, hkv=4, d=128, softcap=50.0)),
        ("paged S1 sinks", dict(seqs=S1, hq=8, hkv=2, d=64, sinks=True)),
        ("paged S1 sinks splits 3", dict(seqs=S1, hq=8, hkv=2, d=64, sinks=True, num_splits=3)),
        ("paged page 1", dict(seqs=S1, hq=8, hkv=2, d=128, page=1)),
        ("paged page 48", dict(seqs=S1, hq=8, hkv=2, d=128, page=48)),
        ("causal Sq > Sk", dict(seqs=[(40, 16), (5, 3)], hq=4, hkv=4, d=128, layout="varlen")),
        ("empty kv", dict(seqs=[(3, 0), (2, 5)], hq=4, hkv=2, d=128, layout="varlen")),
        ("prefill 8/1 MQA d128 2k", dict(seqs=[(2048, 2048)], hq=8, hkv=1, d=128, layout="varlen")),
    ]
    results = []
    for name, kw in cases:
        try:
            results.append(run_case(name, **kw))
        except Exception as exc:  # report and go on: one broken path must not hide the others
            print(f"FAIL {name:48s} raised {type(exc).__name__}: {exc}")
            results.append(False)
    print(f"{sum(results)}/{len(results)} smoke cases passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
