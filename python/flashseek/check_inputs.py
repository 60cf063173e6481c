"""Opt-in validation of the device data of a flash_attn_varlen_func call.

The library never reads device data on the host (that would cost a sync per call and break CUDA graphs), so the
contents of cu_seqlens_q, cu_seqlens_k, seqused_k and block_table are the caller's contract. The kernels clamp
what they read (sequence offsets to the tensors, seqused_k to the block table's capacity, page ids to
[0, num_blocks)) so that bad values cannot make them touch memory outside the tensors given, but a bad value
still gives a meaningless result. This module finds such values: it copies the index tensors to the host (one
sync) and raises ValueError naming the argument, the rule and the first offending entry.

    from flashseek.check_inputs import check_inputs
    check_inputs(**kwargs)            # the exact keyword arguments of a flash_attn_varlen_func call
    flashseek.flash_attn_varlen_func(**kwargs)

Rules (semantics.md):
  cu_seqlens_q   (B+1,) non-decreasing offsets in [0, total_q]; every sequence at most max_seqlen_q queries
  cu_seqlens_k   varlen KV: (B+1,) non-decreasing offsets in [0, total_k]
  seqused_k      (B,) in [0, capacity]: the block table's width * page_size (paged), the cache row length
                 (batched), the sequence's cu_seqlens_k span (varlen); every sequence at most max_seqlen_k keys
  block_table    (B, max_blocks): the entries a sequence uses (its first ceil(seqused_k / page_size) columns) are
                 page ids in [0, num_blocks); entries past them are never read and may hold anything

Needs numpy; torch tensors are read with .cpu() (lists and numpy arrays work too, which is how the CPU tests
drive it). Messages read "<argument>: expected <rule>, got <what came>", like the library's own.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

__all__ = ["check_inputs", "check_index_values", "InputError"]


class InputError(ValueError):
    """A ValueError that also carries the name of the bad argument (`.argument`)."""

    def __init__(self, argument: str, expected: str, got: str):
        super().__init__(f"{argument}: expected {expected}, got {got}")
        self.argument = argument


def _host(t: Any) -> Optional[np.ndarray]:
    """A host int64 copy of a tensor / array / list (None stays None)."""
    if t is None:
        return None
    if hasattr(t, "detach"):  # torch.Tensor, without importing torch
        t = t.detach().cpu().numpy()
    return np.asarray(t).astype(np.int64, copy=False)


def _shape(t: Any) -> tuple:
    return tuple(int(s) for s in (t.shape if hasattr(t, "shape") else np.asarray(t).shape))


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _check_offsets(name: str, cu: np.ndarray, total: int, total_name: str) -> np.ndarray:
    """cu (B+1,): non-negative, non-decreasing, at most `total`. Returns the per-sequence lengths."""
    if cu.ndim != 1 or cu.size < 1:
        raise InputError(name, "shape (B+1,) with at least one entry", f"shape {cu.shape}")
    if (cu < 0).any():
        i = _first(cu < 0)
        raise InputError(name, "offsets >= 0", f"{name}[{i}]={cu[i]}")
    if (cu > total).any():
        i = _first(cu > total)
        raise InputError(name, f"offsets <= {total_name}={total}", f"{name}[{i}]={cu[i]}")
    lens = np.diff(cu)
    if (lens < 0).any():
        i = _first(lens < 0)
        raise InputError(name, "non-decreasing offsets",
                         f"{name}[{i + 1}]={cu[i + 1]} < {name}[{i}]={cu[i]}")
    return lens


def check_index_values(*, total_q: int, cu_seqlens_q, max_seqlen_q: Optional[int] = None,
                       kv_layout: str, total_k: Optional[int] = None, cu_seqlens_k=None, seqused_k=None,
                       block_table=None, num_blocks: Optional[int] = None, page_size: Optional[int] = None,
                       cache_rows: Optional[int] = None, max_seqlen_k: Optional[int] = None) -> None:
    """The rules on host values. kv_layout: "varlen" (total_k, cu_seqlens_k, optional seqused_k), "paged"
    (seqused_k, block_table, num_blocks, page_size) or "batched" (seqused_k, cache_rows, page_size = the length
    of a cache row). Raises InputError (a ValueError) naming the first bad argument."""
    cu_q = _host(cu_seqlens_q)
    if cu_q is None:
        raise InputError("cu_seqlens_q", "a tensor of B+1 offsets", "None")
    q_lens = _check_offsets("cu_seqlens_q", cu_q, int(total_q), "total_q (q.shape[0])")
    batch = cu_q.size - 1
    if max_seqlen_q is not None and q_lens.size and int(q_lens.max()) > int(max_seqlen_q):
        i = int(np.argmax(q_lens))
        raise InputError("max_seqlen_q", f"at least every sequence's query count (sequence {i} has {q_lens[i]})",
                         str(max_seqlen_q))

    used = _host(seqused_k)
    if used is not None:
        if used.shape != (batch,):
            raise InputError("seqused_k", f"shape ({batch},) (B from cu_seqlens_q)", f"shape {used.shape}")
        if (used < 0).any():
            i = _first(used < 0)
            raise InputError("seqused_k", "key counts >= 0", f"seqused_k[{i}]={used[i]}")

    if kv_layout == "varlen":
        cu_k = _host(cu_seqlens_k)
        if cu_k is None:
            raise InputError("cu_seqlens_k", "a tensor of B+1 offsets (varlen KV)", "None")
        if cu_k.shape != (batch + 1,):
            raise InputError("cu_seqlens_k", f"shape ({batch + 1},) (B+1 with B from cu_seqlens_q)",
                             f"shape {cu_k.shape}")
        k_lens = _check_offsets("cu_seqlens_k", cu_k, int(total_k), "total_k (k.shape[0])")
        if used is not None:
            over = used > k_lens
            if over.any():
                i = _first(over)
                raise InputError("seqused_k", "at most the keys cu_seqlens_k gives each sequence",
                                 f"seqused_k[{i}]={used[i]} > {k_lens[i]}")
            k_lens = used
    elif kv_layout == "paged":
        if used is None:
            raise InputError("seqused_k", "a tensor of B key counts (paged KV)", "None")
        table = _host(block_table)
        if table is None or table.ndim != 2 or table.shape[0] != batch:
            got = "None" if table is None else f"shape {table.shape}"
            raise InputError("block_table", f"shape ({batch}, max_blocks) (B from cu_seqlens_q)", got)
        width, page = table.shape[1], int(page_size)
        capacity = width * page
        over = used > capacity
        if over.any():
            i = _first(over)
            raise InputError("seqused_k", f"at most block_table's width * page_size = {width} * {page} = {capacity}",
                             f"seqused_k[{i}]={used[i]}")
        pages = -(-used // page)  # ceil
        in_use = np.arange(width)[None, :] < pages[:, None]
        bad = in_use & ((table < 0) | (table >= int(num_blocks)))
        if bad.any():
            b, c = (int(x) for x in np.argwhere(bad)[0])
            raise InputError("block_table",
                             f"page ids in [0, num_blocks={num_blocks}) in the first ceil(seqused_k / page_size) "
                             f"columns of each row (sequence {b}: seqused_k={used[b]}, {pages[b]} pages)",
                             f"block_table[{b}][{c}]={table[b, c]}")
        k_lens = used
    elif kv_layout == "batched":
        if used is None:
            raise InputError("seqused_k", "a tensor of B key counts (batched KV cache)", "None")
        over = used > int(page_size)
        if over.any():
            i = _first(over)
            raise InputError("seqused_k", f"at most the cache row length k.shape[1]={page_size}",
                             f"seqused_k[{i}]={used[i]}")
        if cache_rows is not None and batch > int(cache_rows):
            raise InputError("seqused_k", f"at most k.shape[0]={cache_rows} sequences (one cache row each)",
                             f"{batch} sequences")
        k_lens = used
    else:
        raise ValueError(f"kv_layout: expected varlen, paged or batched, got {kv_layout!r}")

    if max_seqlen_k is not None and k_lens.size and int(k_lens.max()) > int(max_seqlen_k):
        i = int(np.argmax(k_lens))
        raise InputError("max_seqlen_k", f"at least every sequence's key count (sequence {i} has {k_lens[i]})",
                         str(max_seqlen_k))


def check_inputs(q, k, v=None, max_seqlen_q: Optional[int] = None, cu_seqlens_q=None,
                 max_seqlen_k: Optional[int] = None, cu_seqlens_k=None, seqused_k=None, block_table=None,
                 **_other) -> None:
    """Checks the device data of a flash_attn_varlen_func call given its keyword arguments (the others are
    accepted and ignored). Copies the index tensors to the host: one sync, so call it where that is fine (tests,
    debugging, a slow path), never inside a captured CUDA graph. Raises InputError (a ValueError) naming the bad
    argument: cu_seqlens_q, cu_seqlens_k, seqused_k, block_table, max_seqlen_q or max_seqlen_k."""
    q_shape, k_shape = _shape(q), _shape(k)
    common = dict(total_q=q_shape[0], cu_seqlens_q=cu_seqlens_q, max_seqlen_q=max_seqlen_q, seqused_k=seqused_k,
                  max_seqlen_k=max_seqlen_k)
    if len(k_shape) == 3:
        check_index_values(kv_layout="varlen", total_k=k_shape[0], cu_seqlens_k=cu_seqlens_k, **common)
    elif block_table is not None:
        check_index_values(kv_layout="paged", block_table=block_table, num_blocks=k_shape[0],
                           page_size=k_shape[1], **common)
    else:
        check_index_values(kv_layout="batched", page_size=k_shape[1], cache_rows=k_shape[0], **common)

