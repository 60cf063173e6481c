"""Independent reference for the operator, written from semantics.md and nothing else.

One sequence at a time: gather its keys, form every logit in fp32, mask, softmax, weight the values. No tiling
tricks beyond chunking query rows to bound memory (and skipping keys the mask removes from a whole chunk).

  attention_ref     fp32 out (Sq, Hq, dv) and natural-log LSE (Hq, Sq)
  naive_same_dtype  FA3's tests' `reorder_ops` naive: k pre-scaled and rounded, logits and P rounded to the
                    input dtype, fp32 accumulation; its error against attention_ref sets FA3's tolerance
  naive_fp8         the same for e4m3 inputs, as FA3's fp8 tests do: dequantized inputs in bf16, logits rounded
                    to bf16, P rounded to e4m3 before P*V (what a plain e4m3-input kernel computes)
  reference_outputs both, over every sequence of an Inputs
  apply_rotary      rotary embedding (interleaved GPT-J pairs or GPT-NeoX halves), as flash_attn_with_kvcache does
  merge_ref         vLLM's merge_attn_states

Rules (semantics.md): query i of Sq sees key position p iff p in [i + T - Sq - L, i + T - Sq + R] (T = keys in
total, -1 = unbounded, causal forces R = 0); logits s = scale * q.k (+ q_v.v), softcap c*tanh(s/c) on scaled
logits; a sink adds exp(s_aux) to the denominator only; a row that sees no key outputs 0 with LSE -inf (s_aux
with a sink).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

NEG_INF = float("-inf")


@contextlib.contextmanager
def exact_fp32_matmul():
    """fp32 products must not silently run as TF32 on the GPU: that would make the reference ~1e-3 wrong."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[0], saved[1]
        torch.set_float32_matmul_precision(saved[2])


def visible(rows: torch.Tensor, key_pos: torch.Tensor, sq: int, k_total: int, causal: bool,
            window: Tuple[int, int]) -> torch.Tensor:
    """Bool (len(rows), len(key_pos)): may query `rows[r]` see the key at position key_pos[c]?"""
    left, right = window
    if causal:
        right = 0
    diag = (rows + (k_total - sq))[:, None]
    ok = torch.ones(rows.numel(), key_pos.numel(), dtype=torch.bool, device=rows.device)
    if left >= 0:
        ok &= key_pos[None, :] >= diag - left
    if right >= 0:
        ok &= key_pos[None, :] <= diag + right
    return ok


def _key_range(r0: int, r1: int, sq: int, sk: int, k_total: int, causal: bool, window) -> Tuple[int, int]:
    """Keys [lo, hi) that rows [r0, r1) can see at all, for keys at positions 0..sk-1 (a pure speed-up: the
    mask is still applied to every element of the range)."""
    left, right = window
    if causal:
        right = 0
    off = k_total - sq
    lo = max(0, r0 + off - left) if left >= 0 else 0
    hi = min(sk, r1 - 1 + off + right + 1) if right >= 0 else sk
    return lo, max(lo, hi)


def _attend(q, k, v, *, scale, causal, window, softcap, sink, q_v, key_pos, k_total, round_to, chunk_elems,
            p_round_to=None):
    sq, hq, d = q.shape
    sk, hkv, dv = k.shape[0], k.shape[1], v.shape[2]
    group = hq // hkv
    dev = q.device
    k_total = sk if k_total is None else int(k_total)
    out = torch.zeros(sq, hq, dv, dtype=torch.float32, device=dev)
    lse = torch.full((hq, sq), NEG_INF, dtype=torch.float32, device=dev)
    if sink is not None:
        lse[:] = sink.float()[:, None]
    if sq == 0:
        return out, lse
    rnd = (lambda t: t.to(round_to).float()) if round_to is not None else (lambda t: t)
    rnd_p = (lambda t: t.to(p_round_to).float()) if p_round_to is not None else (lambda t: t)
    sink_h = None if sink is None else sink.float().view(hkv, group, 1, 1)
    rows_per_chunk = max(1, chunk_elems // max(1, hq * max(sk, 1)))
    for r0 in range(0, sq, rows_per_chunk):
        r1 = min(sq, r0 + rows_per_chunk)
        rows = torch.arange(r0, r1, device=dev)
        if key_pos is None:
            lo, hi = _key_range(r0, r1, sq, sk, k_total, causal, window)
            pos = torch.arange(lo, hi, device=dev)
        else:
            lo, hi, pos = 0, sk, key_pos.to(dev)
        n = hi - lo
        if n == 0:
            continue  # nothing visible: 0 and -inf (or the sink) as initialised
        kc, vc = k[lo:hi].float(), v[lo:hi].float()
        qh = q[r0:r1].float().reshape(r1 - r0, hkv, group, d).permute(1, 2, 0, 3).reshape(hkv, -1, d)
        if round_to is None:
            s = torch.bmm(qh, kc.permute(1, 2, 0)) * scale
            if q_v is not None:
                qvh = q_v[r0:r1].float().reshape(r1 - r0, hkv, group, dv).permute(1, 2, 0, 3).reshape(hkv, -1, dv)
                s = s + torch.bmm(qvh, vc.permute(1, 2, 0)) * scale
        else:  # FA3 reorder_ops: scale k first (rounded), then the product (rounded to the input dtype)
            s = rnd(torch.bmm(qh, rnd(kc * scale).permute(1, 2, 0)))
            if q_v is not None:
                qvh = q_v[r0:r1].float().reshape(r1 - r0, hkv, group, dv).permute(1, 2, 0, 3).reshape(hkv, -1, dv)
                s = rnd(s + rnd(torch.bmm(qvh, rnd(vc * scale).permute(1, 2, 0))))
        if softcap > 0:
            s = softcap * torch.tanh(s / softcap)
            s = rnd(s)
        s = s.view(hkv, group, r1 - r0, n)
        mask = visible(rows, pos, sq, k_total, causal, window)
        s = s.masked_fill(~mask, NEG_INF)
        mx = s.amax(dim=-1, keepdim=True)
        if sink_h is not None:
            mx = torch.maximum(mx, sink_h.expand_as(mx))
        mx = torch.where(torch.isinf(mx) & (mx < 0), torch.zeros_like(mx), mx)  # all masked, no sink: avoid nan
        p = torch.exp(s - mx)
        denom = p.sum(dim=-1, keepdim=True)
        if sink_h is not None:
            denom = denom + torch.exp(sink_h - mx)
        safe = torch.where(denom > 0, denom, torch.ones_like(denom))
        vh = vc.permute(1, 0, 2)  # (hkv, n, dv)
        if round_to is None:
            o = torch.matmul(p, vh[:, None]) / safe
        else:
            o = rnd(torch.matmul(rnd_p(rnd(p / safe)), vh[:, None]))
        o = torch.where(denom > 0, o, torch.zeros_like(o))
        l_ = torch.where(denom > 0, torch.log(safe) + mx, torch.full_like(mx, NEG_INF))
        out[r0:r1] = o.permute(2, 0, 1, 3).reshape(r1 - r0, hq, dv)
        lse[:, r0:r1] = l_.reshape(hq, r1 - r0)
    return out, lse


def attention_ref(q, k, v, *, scale: float, causal: bool = False, window=(-1, -1), softcap: float = 0.0,
                  sink: Optional[torch.Tensor] = None, q_v: Optional[torch.Tensor] = None,
                  key_pos: Optional[torch.Tensor] = None, k_total: Optional[int] = None,
                  chunk_elems: int = 1 << 25):
    """fp32 attention of one sequence. q (Sq, Hq, d), k (Sk, Hkv, d), v (Sk, Hkv, dv); q head h reads KV head
    h // (Hq / Hkv). Returns out (Sq, Hq, dv) fp32 and lse (Hq, Sq) fp32 (natural log, sink included)."""
    with exact_fp32_matmul():
        return _attend(q, k, v, scale=scale, causal=causal, window=tuple(window), softcap=softcap, sink=sink,
                       q_v=q_v, key_pos=key_pos, k_total=k_total, round_to=None, chunk_elems=chunk_elems)


def naive_same_dtype(q, k, v, *, scale: float, causal: bool = False, window=(-1, -1), softcap: float = 0.0,
                     sink: Optional[torch.Tensor] = None, q_v: Optional[torch.Tensor] = None,
                     key_pos: Optional[torch.Tensor] = None, k_total: Optional[int] = None,
                     chunk_elems: int = 1 << 25):
    """The same math with every stored intermediate (k * scale, logits, P, out) rounded to q's dtype and fp32
    accumulation, like FA3's tests' naive `attention_ref(upcast=False, reorder_ops=True)`. Returns out in q's
    dtype."""
    with exact_fp32_matmul():
        out, _ = _attend(q, k, v, scale=scale, causal=causal, window=tuple(window), softcap=softcap, sink=sink,
                         q_v=q_v, key_pos=key_pos, k_total=k_total, round_to=q.dtype, chunk_elems=chunk_elems)
    return out.to(q.dtype)


def naive_fp8(q, k, v, *, scale: float, causal: bool = False, window=(-1, -1), softcap: float = 0.0,
              sink: Optional[torch.Tensor] = None, q_v: Optional[torch.Tensor] = None,
              key_pos: Optional[torch.Tensor] = None, k_total: Optional[int] = None, chunk_elems: int = 1 << 25,
              return_lse: bool = False):
    """FA3's naive for e4m3 inputs (its fp8 tests: `attention_ref(q_ref, k_ref, v_ref, upcast=False,
    reorder_ops=True, intermediate_dtype=float8_e4m3fn)` with the dequantized inputs in bf16): q, k, v (already
    dequantized, any float dtype) rounded to bf16, logits and stored intermediates rounded to bf16, P rounded to
    e4m3 before P*V, fp32 accumulation. Returns out in bf16, and with return_lse its LSE (Hq, Sq) fp32 from the
    bf16 logits (the fp8 LSE rule measures against its error)."""
    bf16, e4m3 = torch.bfloat16, torch.float8_e4m3fn
    q, k, v = q.to(bf16), k.to(bf16), v.to(bf16)
    with exact_fp32_matmul():
        out, lse = _attend(q, k, v, scale=scale, causal=causal, window=tuple(window), softcap=softcap, sink=sink,
                           q_v=q_v, key_pos=key_pos, k_total=k_total, round_to=bf16, chunk_elems=chunk_elems,
                           p_round_to=e4m3)
    return (out.to(bf16), lse) if return_lse else out.to(bf16)


@dataclass
class RefOutputs:
    out: torch.Tensor  # (total_q, Hq, dv) fp32
    lse: torch.Tensor  # (Hq, total_q) fp32
    naive: Optional[torch.Tensor]  # (total_q, Hq, dv) in the input dtype (bf16 from naive_fp8 for fp8)
    unquantized: Optional[torch.Tensor] = None  # fp8: fp32 out from the values before the e4m3 cast
    naive_lse: Optional[torch.Tensor] = None  # e4m3 q/k/v: naive_fp8's LSE (Hq, total_q)


def reference_outputs(inputs, with_naive: bool = True) -> RefOutputs:
    """Reference (and naive) over every sequence of an Inputs (flashseek.testing.inputs)."""
    s = inputs.scenario
    total_q = sum(inputs.q_lens)
    dev = inputs.ref_q.device
    out = torch.zeros(total_q, s.num_heads_q, s.head_dim_v, dtype=torch.float32, device=dev)
    lse = torch.full((s.num_heads_q, total_q), NEG_INF, dtype=torch.float32, device=dev)
    fp8 = s.has_fp8
    # e4m3 q/k/v: FA3's fp8 naive (P in e4m3, bf16 out); a 16-bit q against an e4m3 cache: the plain 16-bit naive
    # on the cache dequantized into q's dtype (what an implementation without fp8 tensor-core inputs computes).
    naive_dtype = torch.bfloat16 if s.is_fp8 else inputs.ref_q.dtype
    naive = (torch.zeros(total_q, s.num_heads_q, s.head_dim_v, dtype=naive_dtype, device=dev)
             if with_naive else None)
    unquantized = torch.zeros_like(out) if fp8 and inputs.ref_q_hi is not None else None
    naive_lse = torch.full_like(lse, NEG_INF) if with_naive and s.is_fp8 else None
    cu = inputs.cu_seqlens_q
    kw = dict(scale=s.scale, causal=s.causal, window=s.window, softcap=s.softcap, sink=inputs.s_aux)
    for i in range(s.batch_size):
        a, b = cu[i], cu[i + 1]
        if a == b:
            continue
        r = inputs.ref_seq(i)
        extra = dict(q_v=r.q_v, key_pos=r.key_pos, k_total=r.k_total)
        o, l_ = attention_ref(r.q, r.k, r.v, **kw, **extra)
        out[a:b], lse[:, a:b] = o, l_
        if with_naive and s.is_fp8:
            naive[a:b], naive_lse[:, a:b] = naive_fp8(r.q, r.k, r.v, **kw, **extra, return_lse=True)
        elif with_naive:
            naive[a:b] = naive_same_dtype(r.q, r.k.to(r.q.dtype), r.v.to(r.q.dtype), **kw, **extra)
        if unquantized is not None:
            u = inputs.ref_seq(i, unquantized=True)
            unquantized[a:b] = attention_ref(u.q, u.k, u.v, **kw, **extra)[0]
    return RefOutputs(out=out, lse=lse, naive=naive, unquantized=unquantized, naive_lse=naive_lse)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, pos: torch.Tensor,
                 interleaved: bool) -> torch.Tensor:
    """Rotate the first rotary_dim = 2 * cos.shape[-1] channels of x (..., S, H, d) at integer positions
    pos (..., S). Interleaved: pairs (x0, x1), (x2, x3), ...; otherwise (GPT-NeoX) halves. fp32 math, result in
    x's dtype."""
    half = cos.shape[-1]
    rd = 2 * half
    c = cos[pos].float()[..., None, :]  # (..., S, 1, half)
    s = sin[pos].float()[..., None, :]
    xf = x.float()
    if interleaved:
        x1, x2 = xf[..., 0:rd:2], xf[..., 1:rd:2]
        rot = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)
    else:
        x1, x2 = xf[..., :half], xf[..., half:rd]
        rot = torch.cat((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1)
    return torch.cat((rot, xf[..., rd:]), dim=-1).to(x.dtype)


def merge_ref(prefix_out, prefix_lse, suffix_out, suffix_lse):
    """vLLM's merge_attn_states in fp32: weights exp(lse_i - max) normalised; +inf LSE (an empty partial as FA3
    reports it) counts as -inf. Returns (out fp32 (T, H, d), lse (H, T))."""
    pl = torch.where(torch.isposinf(prefix_lse), torch.full_like(prefix_lse, NEG_INF), prefix_lse.float())
    sl = torch.where(torch.isposinf(suffix_lse), torch.full_like(suffix_lse, NEG_INF), suffix_lse.float())
    mx = torch.maximum(pl, sl)
    mx = torch.where(torch.isinf(mx), torch.zeros_like(mx), mx)
    pw, sw = torch.exp(pl - mx), torch.exp(sl - mx)
    tot = pw + sw
    safe = torch.where(tot > 0, tot, torch.ones_like(tot))
    pw, sw = (pw / safe).t()[..., None], (sw / safe).t()[..., None]
    out = pw * prefix_out.float() + sw * suffix_out.float()
    lse = torch.where(tot > 0, torch.log(safe) + mx, torch.full_like(mx, NEG_INF))
    return out, lse
