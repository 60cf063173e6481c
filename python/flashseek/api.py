"""The operator's Python entry points. Each maps Python defaults onto one call of the C++ binding."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

try:
    import torch
except ImportError as exc:  # the package imports without torch so that CPU tooling works
    torch = None
    _IMPORT_ERROR = f"torch is not importable: {exc}"
else:
    _IMPORT_ERROR = None

_C = None
if _IMPORT_ERROR is None:
    try:
        from flashseek import _C  # noqa: F811  (the compiled binding)
    except ImportError as exc:
        _IMPORT_ERROR = f"the compiled extension flashseek._C is not importable: {exc}"


def is_available() -> bool:
    """True when the compiled extension imports and a CUDA device of compute capability 9.0 is visible."""
    return unavailable_reason() is None


def unavailable_reason() -> Optional[str]:
    """Why the kernels cannot run here, or None when they can."""
    if _IMPORT_ERROR is not None:
        return _IMPORT_ERROR
    if not torch.cuda.is_available():
        return "no CUDA device is visible"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"flashseek needs an sm_90 (Hopper) GPU; this one is sm_{major}{minor}"
    return None


def _require_binding():
    if _C is None:
        raise RuntimeError(f"flashseek kernels are unavailable: {_IMPORT_ERROR}")
    return _C


def _window(window_size) -> Tuple[int, int]:
    if window_size is None:
        return -1, -1
    if len(window_size) != 2:
        raise ValueError(f"window_size: expected (left, right), got {window_size!r}")
    return int(window_size[0]), int(window_size[1])


def flash_attn_varlen_func(
    q,
    k,
    v,
    max_seqlen_q: int,
    cu_seqlens_q,
    max_seqlen_k: int,
    cu_seqlens_k=None,
    seqused_k=None,
    q_v=None,
    dropout_p: float = 0.0,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_size: Optional[Sequence[int]] = None,
    softcap: float = 0.0,
    alibi_slopes=None,
    deterministic: bool = False,
    return_attn_probs: bool = False,
    block_table=None,
    return_softmax_lse: bool = False,
    out=None,
    scheduler_metadata=None,
    q_descale=None,
    k_descale=None,
    v_descale=None,
    num_splits: int = 0,
    fa_version: int = 3,
    s_aux=None,
    cp_world_size: int = 1,
    cp_rank: int = 0,
    cp_tot_seqused_k=None,
):
    """Varlen forward attention. Returns `out`, or `(out, softmax_lse)` when return_softmax_lse.

    q: (total_q, Hq, d); k, v: (total_k, Hkv, d|dv) with cu_seqlens_k, or paged (num_blocks, page_size, Hkv,
    d|dv) with block_table (B, max_blocks) and seqused_k (B,). softmax_lse: (Hq, total_q) float32.
    """
    binding = _require_binding()
    left, right = _window(window_size)
    out, lse = binding.varlen_fwd(
        q, k, v, out, cu_seqlens_q, cu_seqlens_k, seqused_k, block_table, q_v, s_aux,
        scheduler_metadata, q_descale, k_descale, v_descale, None, None, cp_tot_seqused_k,
        int(max_seqlen_q), int(max_seqlen_k), 0,
        0.0 if softmax_scale is None else float(softmax_scale), bool(causal), left, right,
        float(softcap), int(num_splits), bool(return_softmax_lse), float(dropout_p),
        alibi_slopes is not None, bool(return_attn_probs), int(cp_world_size), int(cp_rank),
    )
    return (out, lse) if return_softmax_lse else out


def get_scheduler_metadata(
    batch_size: int,
    max_seqlen_q: int,
    max_seqlen_k: int,
    num_heads_q: int,
    num_heads_kv: int,
    headdim: int,
    cache_seqlens,
    qkv_dtype=None,
    headdim_v: Optional[int] = None,
    cu_seqlens_q=None,
    cu_seqlens_k_new=None,
    cache_leftpad=None,
    page_size: Optional[int] = None,
    max_seqlen_k_new: int = 0,
    causal: bool = False,
    window_size: Optional[Sequence[int]] = None,
    has_softcap: bool = False,
    num_splits: int = 0,
    pack_gqa=None,
    sm_margin: int = 0,
):
    """Precomputes the split schedule of a batch once per step; pass the result as scheduler_metadata."""
    binding = _require_binding()
    left, right = _window(window_size)
    dtype = torch.bfloat16 if qkv_dtype is None else qkv_dtype
    return binding.scheduler_metadata(
        int(batch_size), int(max_seqlen_q), int(max_seqlen_k), int(num_heads_q), int(num_heads_kv),
        int(headdim), int(headdim if headdim_v is None else headdim_v), str(dtype).replace("torch.", ""),
        cache_seqlens, cu_seqlens_q, 0 if page_size is None else int(page_size), bool(causal), left, right,
        bool(has_softcap), int(num_splits),
    )


def flash_attn_with_kvcache(
    q,
    k_cache,
    v_cache,
    k=None,
    v=None,
    rotary_cos=None,
    rotary_sin=None,
    cache_seqlens: Union[int, "torch.Tensor", None] = None,
    cache_batch_idx=None,
    cache_leftpad=None,
    page_table=None,
    cu_seqlens_q=None,
    cu_seqlens_k_new=None,
    max_seqlen_q: Optional[int] = None,
    rotary_seqlens=None,
    q_descale=None,
    k_descale=None,
    v_descale=None,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_size: Sequence[int] = (-1, -1),
    attention_chunk: int = 0,
    softcap: float = 0.0,
    rotary_interleaved: bool = True,
    scheduler_metadata=None,
    num_splits: int = 0,
    pack_gqa=None,
    sm_margin: int = 0,
    return_softmax_lse: bool = False,
    s_aux=None,
):
    """Upstream FA3's KV-cache entry point: batched q (B, Sq, Hq, d) against a cache (B_cache, S, Hkv, d) or a
    paged cache with page_table; optionally appends k, v (B, S_new, Hkv, d) at cache_seqlens (rotating k and q
    when rotary_cos/rotary_sin are given) before attending. Returns out (B, Sq, Hq, dv) [, lse (B, Hq, Sq)].
    With cu_seqlens_q (and max_seqlen_q), q is varlen (total_q, Hq, d): out (total_q, Hq, dv) [, lse (Hq, total_q)],
    each sequence's queries the last of its cache_seqlens keys (causal bottom-right), without an append."""
    binding = _require_binding()
    if cu_seqlens_k_new is not None or rotary_seqlens is not None:
        raise NotImplementedError("flash_attn_with_kvcache: a varlen append (cu_seqlens_k_new, rotary_seqlens) is "
                                  "not supported yet; append with batched k, v or use flash_attn_varlen_func")
    if attention_chunk:
        raise NotImplementedError("flash_attn_with_kvcache: attention_chunk is not supported yet")
    if cu_seqlens_q is not None:
        return _with_kvcache_varlen_q(binding, q, k_cache, v_cache, k, rotary_cos, cache_seqlens, cache_batch_idx,
                                      cache_leftpad, page_table, cu_seqlens_q, max_seqlen_q, q_descale, k_descale,
                                      v_descale, softmax_scale, causal, window_size, softcap, scheduler_metadata,
                                      num_splits, return_softmax_lse, s_aux)
    if q.dim() != 4:
        raise ValueError(f"q: expected 4 dims (batch, seqlen_q, num_heads, headdim), got shape {tuple(q.shape)}")
    batch, seqlen_q, num_heads, headdim = q.shape
    if cache_seqlens is None:
        raise ValueError("cache_seqlens: required (an int or an int32 tensor of shape (batch,))")
    if isinstance(cache_seqlens, int):
        cache_seqlens = torch.full((batch,), cache_seqlens, dtype=torch.int32, device=q.device)
    left, right = _window(window_size)
    if k is not None or rotary_cos is not None:
        q = binding.append_kv(
            q, k_cache, v_cache, k, v, page_table, cache_seqlens, cache_batch_idx, cache_leftpad,
            rotary_cos, rotary_sin, bool(rotary_interleaved), bool(causal) or left >= 0 or right >= 0,
        )
        if k is not None:
            cache_seqlens = cache_seqlens + k.shape[1]
    q_flat = q.reshape(batch * seqlen_q, num_heads, headdim)
    if page_table is not None:
        max_seqlen_k = page_table.shape[1] * k_cache.shape[1]
    else:
        max_seqlen_k = k_cache.shape[1]
    out, lse = binding.varlen_fwd(
        q_flat, k_cache, v_cache, None, None, None, cache_seqlens, page_table, None, s_aux,
        scheduler_metadata, q_descale, k_descale, v_descale, cache_leftpad, cache_batch_idx, None,
        int(seqlen_q), int(max_seqlen_k), int(seqlen_q),
        0.0 if softmax_scale is None else float(softmax_scale), bool(causal), left, right,
        float(softcap), int(num_splits), bool(return_softmax_lse), 0.0, False, False, 1, 0,
    )
    out = out.view(batch, seqlen_q, num_heads, out.shape[-1])
    if return_softmax_lse:
        return out, lse.view(num_heads, batch, seqlen_q).permute(1, 0, 2)
    return out


def _with_kvcache_varlen_q(binding, q, k_cache, v_cache, k, rotary_cos, cache_seqlens, cache_batch_idx,
                           cache_leftpad, page_table, cu_seqlens_q, max_seqlen_q, q_descale, k_descale, v_descale,
                           softmax_scale, causal, window_size, softcap, scheduler_metadata, num_splits,
                           return_softmax_lse, s_aux):
    """flash_attn_with_kvcache with cu_seqlens_q: the varlen forward against the cache as it is."""
    if k is not None or rotary_cos is not None:
        raise NotImplementedError("flash_attn_with_kvcache: appending k, v or rotary with a varlen q (cu_seqlens_q) "
                                  "is not supported yet; append with a batched q (B, Sq, Hq, d)")
    if max_seqlen_q is None:
        raise ValueError("max_seqlen_q: required with cu_seqlens_q (the longest sequence of q)")
    if q.dim() != 3:
        raise ValueError(f"q: expected 3 dims (total_q, num_heads, headdim) with cu_seqlens_q, got shape "
                         f"{tuple(q.shape)}")
    if cache_seqlens is None:
        raise ValueError("cache_seqlens: required (an int or an int32 tensor of shape (batch,))")
    if isinstance(cache_seqlens, int):
        batch = cu_seqlens_q.shape[0] - 1 if cu_seqlens_q.dim() == 1 else 0
        cache_seqlens = torch.full((max(batch, 0),), cache_seqlens, dtype=torch.int32, device=q.device)
    left, right = _window(window_size)
    max_seqlen_k = page_table.shape[1] * k_cache.shape[1] if page_table is not None else k_cache.shape[1]
    out, lse = binding.varlen_fwd(
        q, k_cache, v_cache, None, cu_seqlens_q, None, cache_seqlens, page_table, None, s_aux,
        scheduler_metadata, q_descale, k_descale, v_descale, cache_leftpad, cache_batch_idx, None,
        int(max_seqlen_q), int(max_seqlen_k), 0,
        0.0 if softmax_scale is None else float(softmax_scale), bool(causal), left, right,
        float(softcap), int(num_splits), bool(return_softmax_lse), 0.0, False, False, 1, 0,
    )
    return (out, lse) if return_softmax_lse else out


def merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None):
    """vLLM's merge of two partial attention results by their LSEs (cascade / chunked-context attention).
    outputs: (T, H, d); lses: (H, T) float32. +inf LSEs (empty partials) count as -inf."""
    binding = _require_binding()
    binding.merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse)
    return output
