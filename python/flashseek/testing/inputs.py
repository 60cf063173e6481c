"""Fresh random inputs for one scenario, laid out and passed exactly as vLLM (or upstream FA3) passes them.

Every value is N(0,1) (never zeros: zeros hide unwritten outputs and wrong indexing). Everything the call must not
read is poisoned: KV slots that no sequence uses (the tail of a partly filled page, unused pages, the gap after a
batched row, the slots before a left pad) hold NaN (or what `fill_unused` says), the padding of a strided q row is
NaN, and a given `out` starts as NaN. Block-table entries past a sequence's pages hold random valid page ids (a
kernel may clamp or prefetch them; it must not use them).

Works on CPU tensors as well as CUDA, so the CPU tests can check layouts with tiny shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from flashseek.testing.grid import Scenario
from flashseek.testing.reference import apply_rotary

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "e4m3": getattr(torch, "float8_e4m3fn", None)}


def torch_dtype(name: str) -> torch.dtype:
    dt = TORCH_DTYPES.get(name)
    if dt is None:
        raise ValueError(f"dtype {name!r}: not available in this torch")
    return dt


def out_dtype(s: Scenario) -> torch.dtype:
    """out has the dtype of q, bf16 when q is fp8 (semantics.md); an fp8 cache does not change it."""
    return torch.bfloat16 if s.is_fp8 else torch_dtype(s.dtype)


@dataclass
class SeqRef:
    """What the reference needs for one sequence: q (Sq, Hq, d), k (Sk, Hkv, d), v (Sk, Hkv, dv) in the input
    dtype (fp32 and already multiplied by the descales for e4m3 operands); key positions when they are not
    0..Sk-1."""
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    q_v: Optional[torch.Tensor] = None
    key_pos: Optional[torch.Tensor] = None  # context parallel: global positions of the local keys
    k_total: Optional[int] = None  # the length causal alignment uses (cp_tot_seqused_k), default Sk


@dataclass
class Inputs:
    scenario: Scenario
    device: torch.device
    kwargs: Dict[str, Any]  # the entry call's arguments, by name
    q_lens: List[int]
    k_lens: List[int]  # keys each sequence attends to (global length for context parallel)
    ref_q: torch.Tensor  # (total_q, Hq, d): the q the attention sees (after rotary for the kvcache entry)
    ref_q_v: Optional[torch.Tensor] = None
    out: Optional[torch.Tensor] = None  # the given (poisoned) out view
    out_buffer: Optional[torch.Tensor] = None  # its backing buffer when rows are padded
    out_pad_snapshot: Optional[torch.Tensor] = None  # the padding as it was: the call must leave it alone
    s_aux: Optional[torch.Tensor] = None
    metadata_kwargs: Optional[Dict[str, Any]] = None  # get_scheduler_metadata arguments, when used
    cascade: Optional[Dict[str, Dict[str, Any]]] = None  # "prefix" / "suffix" call kwargs (cascade entry)
    expected_caches: Optional[tuple] = None  # kvcache append: (k_cache, v_cache) as they must be after the call
    descales: Optional[tuple] = None  # fp8: (q, k, v) descale tensors (B, Hkv)
    _seq_k: List[torch.Tensor] = field(default_factory=list)  # per-sequence gathered keys (views or copies)
    _seq_v: List[torch.Tensor] = field(default_factory=list)
    _key_pos: Optional[List[torch.Tensor]] = None
    # fp8: the values before the cast to e4m3 (what vLLM's fp8 test compares against, times the descales)
    ref_q_hi: Optional[torch.Tensor] = None
    _seq_k_hi: Optional[List[torch.Tensor]] = None
    _seq_v_hi: Optional[List[torch.Tensor]] = None

    @property
    def cu_seqlens_q(self) -> List[int]:
        return [0] + list(np.cumsum(self.q_lens).tolist())

    def ref_seq(self, i: int, unquantized: bool = False) -> SeqRef:
        """Sequence i as the reference sees it. fp8: the e4m3 operands dequantized (times their descales), or with
        `unquantized` the values they were cast from, times the same descales (vLLM's fp8 comparison)."""
        s = self.scenario
        a, b = self.cu_seqlens_q[i], self.cu_seqlens_q[i + 1]
        q, k, v = self.ref_q[a:b], self._seq_k[i], self._seq_v[i]
        if unquantized and s.has_fp8:
            q, k, v = self.ref_q_hi[a:b], self._seq_k_hi[i], self._seq_v_hi[i]
        q_v = None if self.ref_q_v is None else self.ref_q_v[a:b]
        if s.has_fp8:
            qd, kd, vd = (d[i].float() for d in self.descales)  # (Hkv,)
            group = s.num_heads_q // s.num_heads_kv
            if s.is_fp8:  # a 16-bit q's descale is ignored (as FA3 does)
                q = q.float() * qd.repeat_interleave(group)[None, :, None]
            if s.cache_dtype == "e4m3":
                k = k.float() * kd[None, :, None]
                v = v.float() * vd[None, :, None]
        key_pos = None if self._key_pos is None else self._key_pos[i]
        return SeqRef(q, k, v, q_v, key_pos, self.k_lens[i] if key_pos is not None else None)


# --------------------------------------------------------------------------------------------------------------


class _Rng:
    """One seed drives both the device generator (tensor values) and a host generator (tables, lengths)."""

    def __init__(self, device: torch.device, seed: Optional[int], generator: Optional[torch.Generator]):
        if generator is None:
            generator = torch.Generator(device=device)
            generator.manual_seed(0 if seed is None else int(seed))
        self.gen = generator
        self.device = device
        host_seed = int(torch.randint(0, 2 ** 31 - 1, (1,), generator=generator, device=generator.device).item())
        self.np = np.random.default_rng(host_seed)

    def randn(self, *shape, dtype=torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=self.gen, device=self.device, dtype=torch.float32).to(dtype)


def _i32(values, device) -> torch.Tensor:
    return torch.tensor(list(values), dtype=torch.int32, device=device)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _padded_rows(rows: int, width: int, pad: int, dtype, device, fill: float) -> tuple:
    """A (rows, width) view into a (rows, width + pad) buffer filled with `fill` (pad=0: plain tensor)."""
    buf = torch.full((rows, width + pad), fill, dtype=dtype, device=device)
    return buf, buf[:, :width]


def _descales(s: Scenario, rng: _Rng, batch: int) -> tuple:
    shape = (batch, s.num_heads_kv)
    out = []
    for _ in range(3):
        if s.descale == "random":
            out.append((torch.rand(shape, generator=rng.gen, device=rng.device) * 1.5 + 0.5).float())
        elif s.descale == "stride0":  # vLLM: layer._q_scale.expand((B, Hkv)), a stride-0 broadcast of a scalar
            scalar = torch.rand((1,), generator=rng.gen, device=rng.device) * 1.5 + 0.5
            out.append(scalar.float().expand(shape))
        else:
            out.append(torch.ones(shape, dtype=torch.float32, device=rng.device))
    return tuple(out)


def _divide_by_descales(seqs: List[torch.Tensor], descale: torch.Tensor, dtype) -> None:
    """seqs[i] (Sk, Hkv, dim), views into a cache, divided in place by descale[i] (Hkv,)."""
    for i, t in enumerate(seqs):
        if t.numel():
            t /= descale[i][None, :, None].to(dtype)


def _stored_lens(s: Scenario) -> tuple:
    """Keys each sequence has in this call's cache, and their global positions for context parallel."""
    if s.cp_world_size > 1:
        w, r = s.cp_world_size, s.cp_rank
        pos = [list(range(r, k, w)) for k in s.k_lens]
        return [len(p) for p in pos], pos
    return list(s.k_lens), None


def _paged_cache(s: Scenario, rng: _Rng, stored: List[int], fill_unused: float, dtype, kv_dims: List[int],
                 prefix_pages: int = 0) -> Dict[str, Any]:
    """Paged caches (num_blocks, page, Hkv, dim) for each dim in kv_dims, plus block table and used mask."""
    page, batch = s.page_size, len(stored)
    pages = [_cdiv(k, page) for k in stored]
    width = max([1] + pages)
    if s.block_table_repeats:  # vLLM's operator tests: torch.randint over all blocks, pages may repeat
        num_blocks = s.num_blocks or 2048
        table = rng.np.integers(0, num_blocks, (batch, width))
        if prefix_pages:
            table[:, :prefix_pages] = table[0, :prefix_pages]
    else:  # an allocator's view: distinct pages in random order, the shared prefix owned once
        total = sum(pages) - prefix_pages * max(0, batch - 1)
        num_blocks = s.num_blocks or (total + max(8, total // 16))
        if num_blocks < total:
            raise ValueError(f"{s.name}: num_blocks {num_blocks} < {total} pages needed")
        perm = rng.np.permutation(num_blocks)
        table = rng.np.integers(0, num_blocks, (batch, width))  # entries past each sequence: random valid ids
        shared, nxt = perm[:prefix_pages], prefix_pages
        for i, n in enumerate(pages):
            own = n - prefix_pages if prefix_pages else n
            table[i, :prefix_pages] = shared
            table[i, prefix_pages:prefix_pages + own] = perm[nxt:nxt + own]
            nxt += own
    used = np.zeros((num_blocks, page), dtype=bool)
    for i, k in enumerate(stored):
        if k == 0:
            continue
        ids = table[i, :pages[i]]
        used[ids[:-1]] = True
        used[ids[-1], : k - (pages[i] - 1) * page] = True
    used_t = torch.from_numpy(used).to(rng.device)
    caches = []
    for dim in kv_dims:
        if s.hnd:  # head-major storage, seen through an NHD-shaped view (head stride = page * dim)
            store = rng.randn(num_blocks, s.num_heads_kv, page, dim, dtype=dtype)
            cache = store.permute(0, 2, 1, 3)
        else:
            cache = rng.randn(num_blocks, page, s.num_heads_kv, dim, dtype=dtype)
        cache[~used_t] = fill_unused
        caches.append(cache)
    full = torch.from_numpy(rng.np.integers(0, num_blocks, (batch, width + s.block_table_pad))).to(torch.int32)
    full[:, :width] = torch.from_numpy(table).to(torch.int32)
    full = full.to(rng.device)
    return dict(caches=caches, table=table, pages=pages, block_table=full[:, :width], num_blocks=num_blocks)


def _gather_pages(cache: torch.Tensor, ids, k: int) -> torch.Tensor:
    if k == 0:
        return cache.new_empty((0,) + tuple(cache.shape[2:]))
    idx = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=cache.device)
    return cache[idx].reshape(-1, cache.shape[2], cache.shape[3])[:k]


def _to_fp8_if(s: Scenario, t: Optional[torch.Tensor], cond: Optional[bool] = None) -> Optional[torch.Tensor]:
    """fp8 scenarios build values in bf16 (NaN included) and cast at the end; a strided view keeps its strides.
    Casts when `cond` (default: q is e4m3)."""
    if t is None or not (s.is_fp8 if cond is None else cond):
        return t
    base = t
    if s.hnd and t.dim() == 4 and not t.is_contiguous():
        return t.permute(0, 2, 1, 3).contiguous().to(torch_dtype("e4m3")).permute(0, 2, 1, 3)
    if t.dim() == 3 and t.numel() > 0 and not t.is_contiguous():
        # q as a view of wider rows (q_row_pad): the e4m3 q keeps the row stride, the gaps hold NaN
        buf = torch.full((t.shape[0], t.stride(0)), float("nan"), dtype=t.dtype, device=t.device)
        buf = buf.to(torch_dtype("e4m3"))
        view = buf.as_strided(tuple(t.shape), tuple(t.stride()))
        view.copy_(t)
        return view
    return base.to(torch_dtype("e4m3"))


# --------------------------------------------------------------------------------------------------------------


def make_inputs(s: Scenario, device="cuda", generator: Optional[torch.Generator] = None, seed: Optional[int] = None,
                fill_unused: float = float("nan")) -> Inputs:
    """Build fresh inputs for one call of `s`. Deterministic in (seed or generator state); `fill_unused` only
    changes the slots the call must not read, so two builds with different fills must give identical outputs."""
    device = torch.device(device)
    rng = _Rng(device, seed, generator)
    if s.entry == "kvcache":
        return _make_kvcache_inputs(s, rng, fill_unused)
    dt = torch_dtype(s.dtype) if not s.is_fp8 else torch.bfloat16  # build in bf16, cast fp8 at the end
    hq, hkv, d, dv, batch = s.num_heads_q, s.num_heads_kv, s.head_dim, s.head_dim_v, s.batch_size
    q_lens, total_q = s.q_lens, s.total_q
    stored, positions = _stored_lens(s)

    # q, possibly a view of a wider row (vLLM slices q out of the fused qkv projection output)
    q_buf, q2 = _padded_rows(total_q, hq * d, s.q_row_pad, dt, device, float("nan"))
    q2.copy_(rng.randn(total_q, hq * d, dtype=dt))
    q = q2.view(total_q, hq, d)
    q_v = rng.randn(total_q, hq, dv, dtype=dt) if s.q_v else None
    s_aux = None
    if s.sinks:
        s_aux = (torch.full((hq,), float(s.sink_value), device=device) if s.sink_value is not None
                 else rng.randn(hq)).float()

    # fp8: the values drawn are the unquantized ones (N(0,1)); each e4m3 operand stores them divided by its
    # (sequence, KV head) descale, as a quantizer with that scale does, so dequantized values stay N(0,1)-sized
    # whatever the descales (logits keep their scale, and vLLM's comparison with the unquantized inputs stays
    # meaningful). A 16-bit q is left alone (its descale is ignored).
    descales = _descales(s, rng, batch) if s.has_fp8 else None
    fp8_kv = s.has_fp8 and s.cache_dtype == "e4m3"
    group = hq // hkv
    cu_q = np.cumsum([0] + q_lens)
    if s.is_fp8:
        for i in range(batch):
            q[cu_q[i]:cu_q[i + 1]] /= descales[0][i].repeat_interleave(group)[None, :, None].to(dt)

    kw: Dict[str, Any] = dict(max_seqlen_q=max(q_lens, default=0), cu_seqlens_q=_i32(cu_q, device))
    seq_k: List[torch.Tensor] = []
    seq_v: List[torch.Tensor] = []
    cascade_pages = s.cascade_prefix // s.page_size if s.entry == "cascade" else 0
    if s.entry == "cascade" and (s.kv_layout != "paged" or s.cascade_prefix % s.page_size
                                 or any(k <= s.cascade_prefix for k in stored)):
        raise ValueError(f"{s.name}: cascade needs a paged cache, a page-aligned prefix shorter than every sequence")

    if s.kv_layout == "varlen":
        total_k = sum(stored)
        k = rng.randn(total_k, hkv, d, dtype=dt)
        v = rng.randn(total_k, hkv, dv, dtype=dt)
        cu_k = np.cumsum([0] + stored)
        seq_k = [k[cu_k[i]:cu_k[i + 1]] for i in range(batch)]
        seq_v = [v[cu_k[i]:cu_k[i + 1]] for i in range(batch)]
        if fp8_kv:  # views: divides k, v in place
            _divide_by_descales(seq_k, descales[1], dt)
            _divide_by_descales(seq_v, descales[2], dt)
        kw.update(cu_seqlens_k=_i32(cu_k, device), max_seqlen_k=max(stored, default=0))
        block_table = None
    elif s.kv_layout == "batched":
        s_max = max(stored, default=0) + s.kv_gap
        k = rng.randn(batch, s_max, hkv, d, dtype=dt)
        v = rng.randn(batch, s_max, hkv, dv, dtype=dt)
        for i, n in enumerate(stored):
            k[i, n:] = fill_unused
            v[i, n:] = fill_unused
        seq_k = [k[i, :n] for i, n in enumerate(stored)]
        seq_v = [v[i, :n] for i, n in enumerate(stored)]
        if fp8_kv:
            _divide_by_descales(seq_k, descales[1], dt)
            _divide_by_descales(seq_v, descales[2], dt)
        kw.update(seqused_k=_i32(stored, device), max_seqlen_k=max(stored, default=0))
        block_table = None
    elif s.kv_layout == "paged":
        # MLA decode: one cache row is [kv_c (dv = 512) | k_pe (d = 64)]; v = row[:dv], k = row[dv:]
        dims = [dv + d] if s.q_v else [d, dv]
        paged = _paged_cache(s, rng, stored, fill_unused, dt, dims, cascade_pages)
        if s.q_v:  # K and V are overlapping strided slices of one 576-wide row
            row = paged["caches"][0]
            k, v = row[..., dv:], row[..., :dv]
        else:
            k, v = paged["caches"]
        ids = [paged["table"][i, :paged["pages"][i]] for i in range(batch)]
        if fp8_kv and not s.q_v:  # every page of sequence i by its descales (a page repeated: its last owner's)
            for cache, dsc in ((k, descales[1]), (v, descales[2])):
                scale = torch.ones(cache.shape[0], cache.shape[2], dtype=torch.float32, device=device)
                for i in range(batch):
                    if len(ids[i]):
                        scale[torch.as_tensor(np.asarray(ids[i]), dtype=torch.long, device=device)] = dsc[i]
                cache /= scale[:, None, :, None].to(dt)
        seq_k = [_gather_pages(k, ids[i], n) for i, n in enumerate(stored)]
        seq_v = [_gather_pages(v, ids[i], n) for i, n in enumerate(stored)]
        block_table = paged["block_table"]
        kw.update(seqused_k=_i32(stored, device), max_seqlen_k=max(stored, default=0), block_table=block_table)
    else:
        raise ValueError(f"{s.name}: unknown kv_layout {s.kv_layout!r}")

    out = out_buf = pad_snap = None
    if s.out_given:
        out_buf, out2 = _padded_rows(total_q, hq * dv, s.q_row_pad, out_dtype(s), device, float("nan"))
        if s.q_row_pad:
            out_buf[:, hq * dv:] = 7.0  # a finite sentinel: the call must not write past the view
            pad_snap = out_buf[:, hq * dv:].clone()
        out = out2.view(total_q, hq, dv)

    q_call, k_call, v_call = q, k, v
    q_hi = seq_k_hi = seq_v_hi = None
    if s.has_fp8:
        q_hi, seq_k_hi, seq_v_hi = q, seq_k, seq_v
        fp8_kv = s.cache_dtype == "e4m3"
        q_call = _to_fp8_if(s, q)
        if s.q_v:
            row8 = _to_fp8_if(s, paged["caches"][0], fp8_kv)
            k_call, v_call = row8[..., dv:], row8[..., :dv]
        else:
            k_call, v_call = _to_fp8_if(s, k, fp8_kv), _to_fp8_if(s, v, fp8_kv)
        # the reference reads the fp8 values (what the kernel reads), dequantized by ref_seq
        q = q_call
        if fp8_kv:
            seq_k = [t.to(torch_dtype("e4m3")) for t in seq_k]
            seq_v = [t.to(torch_dtype("e4m3")) for t in seq_v]

    kw.update(q=q_call, k=k_call, v=v_call, softmax_scale=s.scale, causal=s.causal, window_size=s.window,
              softcap=s.softcap, out=out, num_splits=s.num_splits, return_softmax_lse=s.return_lse)
    if s_aux is not None:
        kw["s_aux"] = s_aux
    if q_v is not None:
        kw["q_v"] = _to_fp8_if(s, q_v)
    if descales is not None:
        kw.update(q_descale=descales[0], k_descale=descales[1], v_descale=descales[2])
    if s.cp_world_size > 1:
        kw.update(cp_world_size=s.cp_world_size, cp_rank=s.cp_rank, cp_tot_seqused_k=_i32(s.k_lens, device))
    metadata = None
    if s.use_scheduler_metadata:
        metadata = dict(batch_size=batch, max_seqlen_q=kw["max_seqlen_q"], max_seqlen_k=kw["max_seqlen_k"],
                        num_heads_q=hq, num_heads_kv=hkv, headdim=d, headdim_v=dv,
                        cache_seqlens=kw.get("seqused_k", _i32(stored, device)), qkv_dtype=torch_dtype(s.cache_dtype),
                        cu_seqlens_q=kw["cu_seqlens_q"], page_size=s.page_size if block_table is not None else None,
                        causal=s.causal, window_size=s.window, has_softcap=s.softcap > 0, num_splits=s.num_splits)
    cascade = _cascade_kwargs(s, kw, stored, cascade_pages) if s.entry == "cascade" else None
    return Inputs(scenario=s, device=device, kwargs=kw, q_lens=list(q_lens), k_lens=list(s.k_lens), ref_q=q,
                  ref_q_v=q_v, out=out, out_buffer=out_buf, out_pad_snapshot=pad_snap, s_aux=s_aux,
                  metadata_kwargs=metadata, cascade=cascade, descales=descales, _seq_k=seq_k, _seq_v=seq_v,
                  _key_pos=None if positions is None else
                  [torch.tensor(p, dtype=torch.long, device=device) for p in positions],
                  ref_q_hi=q_hi, _seq_k_hi=seq_k_hi, _seq_v_hi=seq_v_hi)


def _cascade_kwargs(s: Scenario, kw: Dict[str, Any], stored: List[int], prefix_pages: int) -> Dict[str, Dict]:
    """vLLM's cascade_attention: one non-causal pass of every query over the shared prefix (block_table[:1]),
    one causal pass over each sequence's suffix (a column-offset view of block_table), merged by LSE."""
    device, total_q, prefix = kw["q"].device, sum(s.q_lens), s.cascade_prefix
    common = dict(q=kw["q"], k=kw["k"], v=kw["v"], softmax_scale=s.scale, window_size=s.window,
                  softcap=s.softcap, return_softmax_lse=True, num_splits=s.num_splits)
    prefix_kw = dict(common, cu_seqlens_q=_i32([0, total_q], device), max_seqlen_q=total_q,
                     seqused_k=_i32([prefix], device), max_seqlen_k=prefix, block_table=kw["block_table"][:1],
                     causal=False)
    suffix_lens = [k - prefix for k in stored]
    suffix_kw = dict(common, cu_seqlens_q=kw["cu_seqlens_q"], max_seqlen_q=kw["max_seqlen_q"],
                     seqused_k=_i32(suffix_lens, device), max_seqlen_k=max(suffix_lens),
                     block_table=kw["block_table"][:, prefix_pages:], causal=True)
    return dict(prefix=prefix_kw, suffix=suffix_kw)


# --------------------------------------------------------------------------------------------------------------
# flash_attn_with_kvcache (upstream FA3's entry point)


def _rotary_tables(s: Scenario, rng: _Rng, length: int, dt) -> tuple:
    """Random angles (as FA3's tests draw them): cos, sin of shape (length, rotary_dim / 2) in the input dtype."""
    angle = torch.rand(length, s.rotary_dim // 2, generator=rng.gen, device=rng.device) * 2 * math.pi
    return torch.cos(angle).to(dt), torch.sin(angle).to(dt)


def _make_kvcache_inputs(s: Scenario, rng: _Rng, fill_unused: float) -> Inputs:
    """q (B, Sq, Hq, d) against a batched cache (B_cache, S, Hkv, d) or a paged one. Each sequence's keys live
    at [leftpad, leftpad + k_len) of its cache row; with append_new the last Sq of them arrive as k, v and are
    written by the call (rotated when rotary is given), so before the call those slots are unused (poisoned)."""
    dt, device = torch_dtype(s.dtype), rng.device
    hq, hkv, d, dv, batch = s.num_heads_q, s.num_heads_kv, s.head_dim, s.head_dim_v, s.batch_size
    sq = s.q_lens[0]
    if any(q != sq for q in s.q_lens):
        raise ValueError(f"{s.name}: flash_attn_with_kvcache needs the same q length in every sequence")
    if s.rotary and not s.append_new:
        raise ValueError(f"{s.name}: rotary applies to appended keys; set append_new")
    n_new = sq if s.append_new else 0
    q = rng.randn(batch, sq, hq, d, dtype=dt)
    k_new = rng.randn(batch, n_new, hkv, d, dtype=dt) if n_new else None
    v_new = rng.randn(batch, n_new, hkv, dv, dtype=dt) if n_new else None
    leftpad = [int(x) for x in rng.np.integers(0, 97, batch)] if s.leftpad else [0] * batch
    k_lens = s.k_lens
    cache_seqlens = [lp + k - n_new for lp, k in zip(leftpad, k_lens)]  # absolute end of the cached keys
    s_aux = (torch.full((hq,), float(s.sink_value), device=device) if s.sink_value is not None
             else rng.randn(hq)).float() if s.sinks else None

    if s.kv_layout == "paged":
        if s.leftpad or s.cache_batch_idx:
            raise ValueError(f"{s.name}: leftpad / cache_batch_idx go with a batched cache")
        paged = _paged_cache(s, rng, k_lens, fill_unused, dt, [d, dv])
        k_cache, v_cache = paged["caches"]
        ids = [paged["table"][i, :paged["pages"][i]] for i in range(batch)]
        if n_new:  # the slots the call appends into are unused until it does
            for i in range(batch):
                slots = torch.arange(cache_seqlens[i], k_lens[i], device=device)
                pid = torch.as_tensor(ids[i], device=device, dtype=torch.long)[slots // s.page_size]
                k_cache[pid, slots % s.page_size] = fill_unused
                v_cache[pid, slots % s.page_size] = fill_unused
        rows = None
        page_table = paged["block_table"]
    else:
        s_row = max(lp + k for lp, k in zip(leftpad, k_lens)) + max(s.kv_gap, 16)
        b_cache = 2 * batch if s.cache_batch_idx else batch
        k_cache = rng.randn(b_cache, s_row, hkv, d, dtype=dt)
        v_cache = rng.randn(b_cache, s_row, hkv, dv, dtype=dt)
        rows = [int(x) for x in rng.np.permutation(b_cache)[:batch]] if s.cache_batch_idx else list(range(batch))
        used = torch.zeros(b_cache, s_row, dtype=torch.bool, device=device)
        for i, r in enumerate(rows):
            used[r, leftpad[i]:cache_seqlens[i]] = True
        k_cache[~used] = fill_unused
        v_cache[~used] = fill_unused
        page_table = None

    cos = sin = None
    if s.rotary:
        cos, sin = _rotary_tables(s, rng, (k_cache.shape[1] * (page_table.shape[1] if page_table is not None else 1)),
                                  dt)
    interleaved = s.rotary == "interleaved"
    local = s.causal or s.window != (-1, -1)

    # what the call must leave behind, and what the attention must see
    exp_k, exp_v = k_cache.clone(), v_cache.clone()
    ref_q = q
    if s.rotary:
        pos_q = torch.tensor(cache_seqlens, device=device)[:, None] + (torch.arange(sq, device=device)[None]
                                                                        if local else 0)
        ref_q = apply_rotary(q, cos, sin, pos_q.expand(batch, sq), interleaved)
    for i in range(batch):
        if not n_new:
            continue
        kn, vn = k_new[i], v_new[i]
        if s.rotary:
            pos_k = cache_seqlens[i] + torch.arange(n_new, device=device)
            kn = apply_rotary(kn[None], cos, sin, pos_k[None], interleaved)[0]
        slots = torch.arange(cache_seqlens[i], cache_seqlens[i] + n_new, device=device)
        if page_table is None:
            exp_k[rows[i], slots], exp_v[rows[i], slots] = kn, vn
        else:
            pid = torch.as_tensor(ids[i], device=device, dtype=torch.long)[slots // s.page_size]
            exp_k[pid, slots % s.page_size], exp_v[pid, slots % s.page_size] = kn, vn
    if page_table is None:
        seq_k = [exp_k[r, leftpad[i]:leftpad[i] + k_lens[i]] for i, r in enumerate(rows)]
        seq_v = [exp_v[r, leftpad[i]:leftpad[i] + k_lens[i]] for i, r in enumerate(rows)]
    else:
        seq_k = [_gather_pages(exp_k, ids[i], n) for i, n in enumerate(k_lens)]
        seq_v = [_gather_pages(exp_v, ids[i], n) for i, n in enumerate(k_lens)]

    kw: Dict[str, Any] = dict(
        q=q, k_cache=k_cache, v_cache=v_cache, k=k_new, v=v_new, rotary_cos=cos, rotary_sin=sin,
        cache_seqlens=_i32(cache_seqlens, device),
        cache_batch_idx=_i32(rows, device) if s.cache_batch_idx else None,
        cache_leftpad=_i32(leftpad, device) if s.leftpad else None,
        page_table=page_table, softmax_scale=s.scale, causal=s.causal, window_size=s.window, softcap=s.softcap,
        rotary_interleaved=interleaved, num_splits=s.num_splits, return_softmax_lse=s.return_lse,
    )
    if s_aux is not None:
        kw["s_aux"] = s_aux
    return Inputs(scenario=s, device=device, kwargs=kw, q_lens=list(s.q_lens), k_lens=list(k_lens),
                  ref_q=ref_q.reshape(batch * sq, hq, d), s_aux=s_aux,
                  expected_caches=(exp_k, exp_v) if n_new else None, _seq_k=seq_k, _seq_v=seq_v)
