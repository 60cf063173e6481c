"""A slow pure-torch stand-in for the compiled binding flashseek._C, with the binding's exact signatures (as
api.py calls them). It lets the CPU tests drive the whole testing layer (inputs -> call -> reference -> rules,
cascade, kvcache append, side conditions) without a GPU, and, with a planted bug, show that the checks catch it.

It is written from the binding's side (block tables, seqused_k, leftpad, batch index), in float64 with dense masks,
independently of flashseek.testing.reference.
"""

import math

import torch

BUGS = ("top_left_causal", "nan_leak", "ignore_sink", "lse_plus_inf", "new_out", "window_off_by_one",
        "skip_last_page", "no_append", "fp8_no_descale")


class FakeBinding:
    def __init__(self, bug=None):
        assert bug is None or bug in BUGS, bug
        self.bug = bug
        self.calls = 0

    # ---- attention --------------------------------------------------------------------------------------------
    def varlen_fwd(self, q, k, v, out, cu_seqlens_q, cu_seqlens_k, seqused_k, block_table, q_v, s_aux,
                   scheduler_metadata, q_descale, k_descale, v_descale, leftpad_k, cache_batch_idx,
                   cp_tot_seqused_k, max_seqlen_q, max_seqlen_k, fixed_seqlen_q, softmax_scale, causal, left, right,
                   softcap, num_splits, return_lse, dropout_p, has_alibi, return_attn_probs, cp_world_size, cp_rank):
        self.calls += 1
        if q_v is not None:
            raise NotImplementedError("q_v (MLA decode) not supported yet")
        if cp_world_size > 1:
            raise NotImplementedError("context parallel not supported yet")
        total_q, hq, d = q.shape
        dv = v.shape[-1]
        scale = softmax_scale if softmax_scale > 0 else d ** -0.5
        if cu_seqlens_q is not None:
            cu_q = cu_seqlens_q.tolist()
        else:
            batch = seqused_k.numel()
            cu_q = [i * fixed_seqlen_q for i in range(batch + 1)]
        batch = len(cu_q) - 1
        out_dtype = torch.bfloat16 if q.element_size() == 1 else q.dtype
        res = torch.empty(total_q, hq, dv, dtype=out_dtype, device=q.device)
        lse = torch.empty(hq, total_q, dtype=torch.float32, device=q.device)
        for b in range(batch):
            qa, qb = cu_q[b], cu_q[b + 1]
            kv = self._keys(b, k, v, cu_seqlens_k, seqused_k, block_table, leftpad_k, cache_batch_idx)
            qb_, kv = self._dequantize(b, q[qa:qb], kv, q_descale, k_descale, v_descale)
            o, l_ = self._attend(qb_, kv, scale, causal, left, right, softcap, s_aux)
            res[qa:qb] = o.to(out_dtype)
            lse[:, qa:qb] = l_.float()
        if out is not None and self.bug != "new_out":
            out.copy_(res)
            res = out
        return res, lse

    def _dequantize(self, b, q, kv, q_descale, k_descale, v_descale):
        """e4m3 operands times their (B, Hkv) descales, in float64; a 16-bit operand's descale is ignored."""
        keys, vals, n = kv
        if self.bug == "fp8_no_descale":
            return q, kv
        fp8 = getattr(torch, "float8_e4m3fn", None)
        hkv = keys.shape[1]
        if q.dtype == fp8 and q_descale is not None:
            q = q.double() * q_descale[b].double().repeat_interleave(q.shape[1] // hkv)[None, :, None]
        if keys.dtype == fp8:
            if k_descale is not None:
                keys = keys.double() * k_descale[b].double()[None, :, None]
            if v_descale is not None:
                vals = vals.double() * v_descale[b].double()[None, :, None]
        return q, (keys, vals, n)

    def _keys(self, b, k, v, cu_seqlens_k, seqused_k, block_table, leftpad_k, cache_batch_idx):
        """(keys, values, how many of them are the sequence's): more only with the planted nan_leak bug."""
        if cu_seqlens_k is not None:
            a, e = cu_seqlens_k[b].item(), cu_seqlens_k[b + 1].item()
            return k[a:e], v[a:e], e - a
        n = int(seqused_k[b].item())
        if block_table is not None:
            page = k.shape[1]
            pages = block_table[b, : math.ceil(n / page)].long()
            if self.bug == "skip_last_page" and len(pages) > 1:
                pages = torch.cat([pages[:-1], pages[:1]])
            kk = k[pages].reshape(-1, k.shape[2], k.shape[3])
            vv = v[pages].reshape(-1, v.shape[2], v.shape[3])
            if self.bug == "nan_leak":  # read the whole last page, mask its tail by weight 0 (NaN * 0 = NaN)
                return kk, vv, n
            return kk[:n], vv[:n], n
        row = int(cache_batch_idx[b].item()) if cache_batch_idx is not None else b
        start = int(leftpad_k[b].item()) if leftpad_k is not None else 0
        return k[row, start:n], v[row, start:n], n - start

    def _attend(self, q, kv, scale, causal, left, right, softcap, s_aux):
        keys, vals, n = kv
        sq, hq, _ = q.shape
        sk, hkv = keys.shape[0], keys.shape[1]
        group = hq // hkv
        kk = keys.double().repeat_interleave(group, dim=1)
        vv = vals.double().repeat_interleave(group, dim=1)
        s = torch.einsum("qhd,khd->hqk", q.double(), kk) * scale
        if softcap > 0:
            s = softcap * torch.tanh(s / softcap)
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None, :]
        diag = i + n - sq if self.bug != "top_left_causal" else i
        ok = (j < n).expand(sq, sk).clone()
        r = 0 if causal else right
        if left >= 0:
            ok &= j >= diag - left + (1 if self.bug == "window_off_by_one" else 0)
        if r >= 0:
            ok &= j <= diag + r
        s = s.masked_fill(~ok, float("-inf"))
        sink = None if (s_aux is None or self.bug == "ignore_sink") else s_aux.double()[:, None, None]
        m = s.amax(-1, keepdim=True) if sk else torch.full((hq, sq, 1), float("-inf"), dtype=torch.float64)
        if sink is not None:
            m = torch.maximum(m, sink.expand_as(m))
        m = torch.nan_to_num(m, neginf=0.0)
        p = torch.exp(s - m)
        z = p.sum(-1, keepdim=True) + (torch.exp(sink - m) if sink is not None else 0)
        o = torch.einsum("hqk,khd->qhd", p, vv) / z.permute(1, 0, 2).clamp_min(1e-300)
        lse = (torch.log(z) + m).squeeze(-1)
        if self.bug == "lse_plus_inf":
            lse = torch.where(torch.isinf(lse), torch.full_like(lse, float("inf")), lse)
        o = torch.where(z.permute(1, 0, 2) > 0, o, torch.zeros_like(o))
        return o, lse

    # ---- the other entry points -------------------------------------------------------------------------------
    def scheduler_metadata(self, batch_size, max_seqlen_q, max_seqlen_k, hq, hkv, d, dv, dtype, cache_seqlens,
                           cu_seqlens_q, page_size, causal, left, right, has_softcap, num_splits):
        return torch.zeros(8 + batch_size, dtype=torch.int32, device=cache_seqlens.device)

    def merge_attn_states(self, out, p_out, p_lse, s_out, s_lse, out_lse):
        pl = torch.where(torch.isposinf(p_lse), torch.full_like(p_lse, float("-inf")), p_lse).double()
        sl = torch.where(torch.isposinf(s_lse), torch.full_like(s_lse, float("-inf")), s_lse).double()
        m = torch.nan_to_num(torch.maximum(pl, sl), neginf=0.0)
        a, b = torch.exp(pl - m), torch.exp(sl - m)
        t = (a + b).clamp_min(1e-300)
        res = (a / t).t()[..., None] * p_out.double() + (b / t).t()[..., None] * s_out.double()
        out.copy_(res.to(out.dtype))
        if out_lse is not None:
            out_lse.copy_((torch.log(t) + m).float())

    def append_kv(self, q, k_cache, v_cache, k, v, page_table, cache_seqlens, cache_batch_idx, cache_leftpad,
                  rotary_cos, rotary_sin, interleaved, causal_or_local):
        batch, sq = q.shape[0], q.shape[1]
        if rotary_cos is not None:
            q = torch.stack([self._rotate(q[b], rotary_cos, rotary_sin,
                                          int(cache_seqlens[b]) + (torch.arange(sq) if causal_or_local else
                                                                   torch.zeros(sq, dtype=torch.long)), interleaved)
                             for b in range(batch)])
        if k is None or self.bug == "no_append":
            return q
        n = k.shape[1]
        for b in range(batch):
            pos = int(cache_seqlens[b]) + torch.arange(n)
            kb = self._rotate(k[b], rotary_cos, rotary_sin, pos, interleaved) if rotary_cos is not None else k[b]
            if page_table is not None:
                page = k_cache.shape[1]
                pid = page_table[b].long()[pos // page]
                k_cache[pid, pos % page] = kb
                v_cache[pid, pos % page] = v[b]
            else:
                row = int(cache_batch_idx[b]) if cache_batch_idx is not None else b
                k_cache[row, pos] = kb
                v_cache[row, pos] = v[b]
        return q

    @staticmethod
    def _rotate(x, cos, sin, pos, interleaved):
        """x (S, H, d) at positions pos (S,)."""
        half = cos.shape[1]
        c, s = cos[pos].double()[:, None, :], sin[pos].double()[:, None, :]
        xd = x.double()
        out = xd.clone()
        if interleaved:
            a, b = xd[..., 0:2 * half:2], xd[..., 1:2 * half:2]
            out[..., 0:2 * half:2], out[..., 1:2 * half:2] = a * c - b * s, a * s + b * c
        else:
            a, b = xd[..., :half], xd[..., half:2 * half]
            out[..., :half], out[..., half:2 * half] = a * c - b * s, a * s + b * c
        return out.to(x.dtype)
