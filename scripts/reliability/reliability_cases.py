"""Builders shared by the reliability tests (tests/reliability) and the sanitizer workload. They need torch but no
GPU: everything here also runs on CPU tensors, which is how the CPU tests check the hostile cases against the
input checker without a device.

  bits(t)                     an integer view for bitwise comparison (NaN == NaN when the bits agree)
  Guarded                     a tensor carved out of a larger NaN-poisoned buffer; .violations() names any write
                              into the guard regions before / after it (or into the padding of its rows)
  HOSTILE_CASES / build_hostile / run_hostile
                              device data outside the contract (page ids out of range, seqused_k past the
                              block table, cu_seqlens decreasing or past the tensors), one call each
  set_unused_table_entries    garbage in block-table columns that no sequence uses (legal: never read)
  pack_sequences              one call's kwargs from per-sequence q, k, v (paged / varlen / batched), pages in
                              random order and NaN where nothing lives
  reference_for_call          fp32 reference (and FA3's same-dtype naive) of a flash_attn_varlen_func call,
                              read back from its kwargs
  run_fuzz_case               one fuzz case: inputs -> call -> every rule of flashseek.testing.tolerance
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

import flashseek
from flashseek.testing.grid import Scenario, custom_heads, make_scenario
from flashseek.testing.inputs import make_inputs
from flashseek.testing.reference import attention_ref, naive_same_dtype
from flashseek.testing.run import call_flashseek, check_call
from flashseek.testing.tolerance import CheckResult, check_output, failed

# The tests' device. Only dry runs of the test code change it (to "cpu", with a stand-in binding installed).
DEVICE = os.environ.get("FLASHSEEK_RELIABILITY_DEVICE", "cuda")
INT32_MAX = 2 ** 31 - 1
INT32_MIN = -(2 ** 31)
NAN = float("nan")


def bits(t: torch.Tensor) -> torch.Tensor:
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    return t.contiguous().view(ints[t.element_size()])


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


def is_cuda_error(message: str) -> bool:
    """Whether an exception message is a CUDA error that leaves the context unusable (a device-side fault)."""
    return any(m in message for m in ("CUDA error", "illegal memory access", "illegal instruction",
                                      "unspecified launch failure", "misaligned address", "cudaError"))


def sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


# ---- guarded buffers ----------------------------------------------------------------------------------------------

class Guarded:
    """A (rows, *inner) tensor inside a NaN-filled buffer with `guard` elements before and after it; with
    row_pad > 0 each row is followed by row_pad elements of padding (a view whose row stride exceeds its
    width, as vLLM passes out). violations() reports writes anywhere but the tensor's own elements."""

    def __init__(self, shape: Sequence[int], dtype, device, guard: int = 4096, row_pad: int = 0,
                 fill: float = NAN):
        shape = tuple(int(s) for s in shape)
        rows, inner = shape[0], shape[1:]
        width = int(math.prod(inner))
        self.stride_row = width + row_pad
        self.guard = guard
        self.body = rows * self.stride_row
        self.buffer = torch.full((guard + self.body + guard,), fill, dtype=dtype, device=device)
        grid = self.buffer[guard:guard + self.body].view(rows, self.stride_row) if rows else \
            self.buffer[guard:guard].view(0, self.stride_row)
        self.tensor = grid[:, :width].unflatten(1, inner) if inner else grid[:, 0]
        self.mask = torch.ones_like(self.buffer, dtype=torch.bool)  # True where nothing may write
        inside = self.mask[guard:guard + self.body].view(rows, self.stride_row)
        inside[:, :width] = False
        self.snapshot = self.buffer.clone()

    def copy_from(self, t: torch.Tensor) -> "Guarded":
        self.tensor.copy_(t)
        self.snapshot = self.buffer.clone()
        return self

    def violations(self) -> Optional[str]:
        changed = (bits(self.buffer) != bits(self.snapshot)) & self.mask
        if not bool(changed.any()):
            return None
        idx = changed.nonzero().flatten()
        first = int(idx[0])
        if first < self.guard:
            where = f"{self.guard - first} elements before the tensor"
        elif first >= self.guard + self.body:
            where = f"{first - self.guard - self.body} elements after the tensor"
        else:
            off = first - self.guard
            where = f"in the padding of row {off // self.stride_row}"
        return f"{idx.numel()} guard elements written, first {where}"


# ---- hostile device data ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HostileCase:
    name: str
    base: str  # key of BASES
    arg: Optional[str]  # the argument check_inputs must name; None: not a flash_attn_varlen_func call
    mutate: Callable[[Dict[str, Any]], None]
    note: str = ""


def _h(batch: str, heads, **kw) -> Dict[str, Any]:
    return dict(batch=batch, heads=heads, kw=kw)


BASES: Dict[str, Scenario] = {
    name: make_scenario("edge", b["heads"], b["batch"], name=f"hostile-base/{name}", **b["kw"])
    for name, b in {
        "paged": _h("q60s300_q1s200_q5s40_q1s1", custom_heads(8, 2, 128), page_size=16, block_table_pad=3,
                    return_lse=True),
        "paged-splits": _h("3q1s1500_q2s700", custom_heads(8, 1, 64), page_size=16, num_splits=8, return_lse=True,
                           use_scheduler_metadata=True),
        "paged-hnd-p48": _h("q30s200_2q1s333", custom_heads(4, 2, 96), page_size=48, hnd=True, return_lse=True),
        "varlen": _h("q60s300_q1s200_q5s40", custom_heads(8, 2, 64), kv_layout="varlen", return_lse=True),
        "varlen-splits": _h("2q1s2000_q3s900", custom_heads(8, 1, 128), kv_layout="varlen", num_splits=8,
                            return_lse=True),
        "batched": _h("q30s100_q1s60_q2s90", custom_heads(4, 4, 80), kv_layout="batched", kv_gap=17,
                      return_lse=True),
        "kvcache-paged": _h("3q2s200", custom_heads(8, 2, 128), entry="kvcache", page_size=16, append_new=True,
                            rotary="interleaved", rotary_dim=64, out_given=False, return_lse=True),
        "kvcache-batched": _h("3q1s150", custom_heads(4, 2, 64), entry="kvcache", kv_layout="batched",
                              leftpad=True, cache_batch_idx=True, append_new=True, out_given=False),
    }.items()
}


def _set(name: str, index, value: int) -> Callable[[Dict[str, Any]], None]:
    def mutate(kw):
        kw[name][index] = value
    return mutate


def _set_host(name: str, value: int) -> Callable[[Dict[str, Any]], None]:
    def mutate(kw):
        kw[name] = value
    return mutate


def _seq(*fns: Callable[[Dict[str, Any]], None]) -> Callable[[Dict[str, Any]], None]:
    def mutate(kw):
        for f in fns:
            f(kw)
    return mutate


def _bt_random(kw):
    bt = kw["block_table"]
    gen = torch.Generator(device=bt.device).manual_seed(1234)
    bt.copy_(torch.randint(INT32_MIN, INT32_MAX, tuple(bt.shape), generator=gen, device=bt.device,
                           dtype=torch.int64).to(torch.int32))


def _bt_one_past(kw):
    kw["block_table"][0, 3] = kw["k"].shape[0]  # == num_blocks


def _seqused_past_table(kw):
    bt, page = kw["block_table"], kw["k"].shape[1]
    kw["seqused_k"][0] = bt.shape[1] * page + 1


def _seqused_past_row(kw):
    kw["seqused_k"][0] = kw["k"].shape[1] + 100


def _cu_decreasing(name: str, drop: int):
    def mutate(kw):
        cu = kw[name]
        cu[2] = max(0, int(cu[1]) - drop)
    return mutate


def _cu_past_total(name: str, extra: int):
    def mutate(kw):
        total = kw["q" if name == "cu_seqlens_q" else "k"].shape[0]
        cu = kw[name]
        cu[-1] = total + extra
        if cu.numel() > 2:
            cu[-2] = total + 5
    return mutate


def _kv_seqlens_past_table(kw):
    kw["cache_seqlens"][0] = kw["page_table"].shape[1] * kw["k_cache"].shape[1] + 3


def _kv_seqlens_past_row(kw):
    kw["cache_seqlens"][0] = kw["k_cache"].shape[1] + 50


def _page_table_random(kw):
    pt = kw["page_table"]
    gen = torch.Generator(device=pt.device).manual_seed(99)
    pt.copy_(torch.randint(INT32_MIN, INT32_MAX, tuple(pt.shape), generator=gen, device=pt.device,
                           dtype=torch.int64).to(torch.int32))


def _all(name: str, value: int):
    def mutate(kw):
        kw[name][:] = value
    return mutate


_everything = _seq(_bt_random, _all("seqused_k", INT32_MAX), _cu_decreasing("cu_seqlens_q", 50))

HOSTILE_CASES: List[HostileCase] = [
    # block_table: page ids of used columns outside [0, num_blocks)
    HostileCase("paged/bt-negative", "paged", "block_table", _set("block_table", (0, slice(None)), -1)),
    HostileCase("paged/bt-int-min", "paged", "block_table",
                _seq(_set("block_table", (1, 0), INT32_MIN), _set("block_table", (0, 1), INT32_MIN))),
    HostileCase("paged/bt-num-blocks", "paged", "block_table", _bt_one_past, "one past the last page"),
    HostileCase("paged/bt-int-max", "paged", "block_table", _all("block_table", INT32_MAX)),
    HostileCase("paged/bt-random", "paged", "block_table", _bt_random, "every entry a random int32"),
    HostileCase("hnd-p48/bt-random", "paged-hnd-p48", "block_table", _bt_random),
    HostileCase("splits/bt-int-max", "paged-splits", "block_table", _all("block_table", INT32_MAX)),
    # seqused_k: more keys than the block table (or the cache row) holds, or negative
    HostileCase("paged/seqused-past-table", "paged", "seqused_k", _seqused_past_table),
    HostileCase("paged/seqused-int-max", "paged", "seqused_k", _all("seqused_k", INT32_MAX)),
    HostileCase("paged/seqused-negative", "paged", "seqused_k",
                _seq(_set("seqused_k", 0, -1), _set("seqused_k", 1, INT32_MIN))),
    HostileCase("hnd-p48/seqused-past-table", "paged-hnd-p48", "seqused_k", _seqused_past_table),
    HostileCase("splits/seqused-int-max", "paged-splits", "seqused_k", _all("seqused_k", INT32_MAX)),
    HostileCase("splits/seqused-past-table", "paged-splits", "seqused_k", _seqused_past_table),
    HostileCase("batched/seqused-past-row", "batched", "seqused_k", _seqused_past_row),
    HostileCase("batched/seqused-int-max", "batched", "seqused_k", _all("seqused_k", INT32_MAX)),
    HostileCase("batched/seqused-negative", "batched", "seqused_k", _set("seqused_k", 1, -3)),
    # cu_seqlens_q: decreasing, past total_q, negative, int32 extremes; max_seqlen_q below a sequence
    HostileCase("paged/cuq-decreasing", "paged", "cu_seqlens_q", _cu_decreasing("cu_seqlens_q", 50)),
    HostileCase("paged/cuq-past-total", "paged", "cu_seqlens_q", _cu_past_total("cu_seqlens_q", 1000)),
    HostileCase("paged/cuq-int-max", "paged", "cu_seqlens_q", _set("cu_seqlens_q", slice(1, None), INT32_MAX)),
    HostileCase("paged/cuq-negative", "paged", "cu_seqlens_q", _set("cu_seqlens_q", 0, -100)),
    HostileCase("paged/cuq-int-min", "paged", "cu_seqlens_q", _set("cu_seqlens_q", 1, INT32_MIN)),
    HostileCase("paged/max-seqlen-q-small", "paged", "max_seqlen_q", _set_host("max_seqlen_q", 7),
                "a host int below a sequence's length: the grid drops its extra queries"),
    HostileCase("splits/cuq-decreasing", "paged-splits", "cu_seqlens_q", _cu_decreasing("cu_seqlens_q", 2)),
    HostileCase("batched/cuq-decreasing", "batched", "cu_seqlens_q", _cu_decreasing("cu_seqlens_q", 20)),
    HostileCase("varlen/cuq-past-total", "varlen", "cu_seqlens_q", _cu_past_total("cu_seqlens_q", 77)),
    # cu_seqlens_k (varlen KV): decreasing, past total_k, negative, int32 extremes
    HostileCase("varlen/cuk-decreasing", "varlen", "cu_seqlens_k", _cu_decreasing("cu_seqlens_k", 100)),
    HostileCase("varlen/cuk-past-total", "varlen", "cu_seqlens_k", _cu_past_total("cu_seqlens_k", 500)),
    HostileCase("varlen/cuk-int-max", "varlen", "cu_seqlens_k", _set("cu_seqlens_k", slice(1, None), INT32_MAX)),
    HostileCase("varlen/cuk-negative", "varlen", "cu_seqlens_k", _set("cu_seqlens_k", 1, -7)),
    HostileCase("varlen/cuk-int-min", "varlen", "cu_seqlens_k", _set("cu_seqlens_k", 0, INT32_MIN)),
    HostileCase("varlen-splits/cuk-int-max", "varlen-splits", "cu_seqlens_k",
                _set("cu_seqlens_k", slice(1, None), INT32_MAX)),
    HostileCase("varlen-splits/cuk-decreasing", "varlen-splits", "cu_seqlens_k", _cu_decreasing("cu_seqlens_k", 1500)),
    # all at once
    HostileCase("paged/everything", "paged", "cu_seqlens_q", _everything),
    HostileCase("splits/everything", "paged-splits", "cu_seqlens_q", _everything),
    # flash_attn_with_kvcache: the append writes into the cache at cache_seqlens through page_table
    HostileCase("kvcache-paged/cache-seqlens-negative", "kvcache-paged", None,
                _seq(_set("cache_seqlens", 0, -5), _set("cache_seqlens", 1, INT32_MIN))),
    HostileCase("kvcache-paged/cache-seqlens-int-max", "kvcache-paged", None, _all("cache_seqlens", INT32_MAX)),
    HostileCase("kvcache-paged/cache-seqlens-past-table", "kvcache-paged", None, _kv_seqlens_past_table),
    HostileCase("kvcache-paged/page-table-random", "kvcache-paged", None, _page_table_random),
    HostileCase("kvcache-batched/batch-idx-bad", "kvcache-batched", None,
                _seq(_set("cache_batch_idx", 0, -1), _set("cache_batch_idx", 1, INT32_MAX))),
    HostileCase("kvcache-batched/leftpad-bad", "kvcache-batched", None,
                _seq(_set("cache_leftpad", 0, INT32_MAX), _set("cache_leftpad", 1, -9))),
    HostileCase("kvcache-batched/cache-seqlens-past-row", "kvcache-batched", None,
                _kv_seqlens_past_row),
]


@dataclass
class HostileCall:
    case: HostileCase
    scenario: Scenario
    kwargs: Dict[str, Any]
    guards: Dict[str, Guarded]
    frozen: Dict[str, torch.Tensor]  # clones of every input the call must not write
    metadata_kwargs: Optional[Dict[str, Any]] = None


def build_hostile(case: HostileCase, device="cuda", seed: int = 0) -> HostileCall:
    """Valid inputs for the case's base scenario, then the case's corruption. `out` (or, for the kvcache entry,
    the caches it appends into) lives inside a Guarded buffer."""
    s = BASES[case.base]
    inputs = make_inputs(s, device, seed=seed)
    kw = dict(inputs.kwargs)
    guards: Dict[str, Guarded] = {}
    if s.entry == "kvcache":
        for name in ("k_cache", "v_cache"):
            t = kw[name]
            guards[name] = Guarded(t.shape, t.dtype, t.device).copy_from(t)
            kw[name] = guards[name].tensor
    else:
        guards["out"] = Guarded((s.total_q, s.num_heads_q, s.head_dim_v), kw["q"].dtype, device, row_pad=8)
        kw["out"] = guards["out"].tensor
    case.mutate(kw)
    frozen = {k: v.clone() for k, v in kw.items() if isinstance(v, torch.Tensor) and k not in guards and k != "out"}
    md = None
    if inputs.metadata_kwargs is not None:  # as the engine computes it each step, from the (bad) device data
        md = dict(inputs.metadata_kwargs, cache_seqlens=kw["seqused_k"], cu_seqlens_q=kw["cu_seqlens_q"],
                  max_seqlen_q=kw["max_seqlen_q"])
    return HostileCall(case, s, kw, guards, frozen, md)


def run_checker(hc: HostileCall) -> Tuple[Optional[str], str]:
    """(the argument check_inputs named, its message); ("", ...) when it raised nothing."""
    from flashseek.check_inputs import check_inputs
    try:
        check_inputs(**hc.kwargs)
    except ValueError as exc:
        return getattr(exc, "argument", str(exc).split(":")[0]), str(exc)
    return "", "no error raised"


def run_hostile(hc: HostileCall, device="cuda") -> Dict[str, Any]:
    """One hostile call: it must finish (synchronize raises no CUDA error), write nothing outside out (or the
    caches) and write none of its inputs. Returns the metrics line of the case."""
    res: Dict[str, Any] = {"kind": "case", "name": hc.case.name, "crashed": False, "error": None}
    kw = dict(hc.kwargs)
    try:
        if hc.metadata_kwargs is not None:
            kw["scheduler_metadata"] = flashseek.get_scheduler_metadata(**hc.metadata_kwargs)
        if hc.scenario.entry == "kvcache":
            flashseek.flash_attn_with_kvcache(**kw)
        else:
            flashseek.flash_attn_varlen_func(**kw)
        sync(device)
    except Exception as exc:  # a CUDA error here poisons the context: the caller stops the run
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        res["error"] = f"{type(exc).__name__}: {msg}"
        res["crashed"] = is_cuda_error(msg)
        res["ok"] = False
        res["reason"] = res["error"]
        return res
    guard_msgs = [f"{name}: {v}" for name, g in hc.guards.items() for v in [g.violations()] if v]
    changed = [name for name, t in hc.frozen.items() if not bitwise_equal(hc.kwargs[name], t)]
    res.update(guards_ok=not guard_msgs, inputs_unchanged=not changed)
    reasons = guard_msgs + ([f"inputs written: {', '.join(changed)}"] if changed else [])
    res["ok"] = not reasons
    if reasons:
        res["reason"] = "; ".join(reasons)
    return res


FOLLOWUP = make_scenario("decode-paged", custom_heads(8, 2, 128), "q20s100_4q1s300", name="hostile/followup",
                         page_size=16, return_lse=True)


def set_unused_table_entries(kw: Dict[str, Any], value: int) -> None:
    """Block-table columns past each sequence's pages get `value` (legal: the call must never read them)."""
    bt, page = kw["block_table"], kw["k"].shape[1]
    for b, n in enumerate(kw["seqused_k"].tolist()):
        bt[b, -(-n // page):] = value


# ---- building calls from per-sequence tensors ------------------------------------------------------------------

def pack_sequences(qs: Sequence[torch.Tensor], ks: Sequence[torch.Tensor], vs: Sequence[torch.Tensor], *,
                   layout: str = "paged", page_size: int = 16, seed: int = 0, fill: float = NAN,
                   spare_pages: int = 5, kv_gap: int = 0, **call: Any) -> Dict[str, Any]:
    """flash_attn_varlen_func kwargs holding these sequences (q (Sq, Hq, d), k (Sk, Hkv, d), v (Sk, Hkv, dv)):
    paged with pages in a random order (and random valid ids in unused table entries), varlen, or batched rows
    `kv_gap` longer than needed; `fill` wherever no sequence's key lives. Extra kwargs are passed through."""
    device, dt = qs[0].device, qs[0].dtype
    gen = torch.Generator().manual_seed(int(seed))
    q_lens, k_lens = [t.shape[0] for t in qs], [t.shape[0] for t in ks]
    batch, hkv, d, dv = len(qs), ks[0].shape[1], ks[0].shape[2], vs[0].shape[2]
    cumsum = lambda xs: torch.tensor([0] + list(torch.tensor(xs).cumsum(0).tolist()), dtype=torch.int32)  # noqa
    kw: Dict[str, Any] = dict(q=torch.cat(list(qs)), cu_seqlens_q=cumsum(q_lens).to(device),
                              max_seqlen_q=max(q_lens, default=0), max_seqlen_k=max(k_lens, default=0))
    if layout == "varlen":
        kw.update(k=torch.cat(list(ks)), v=torch.cat(list(vs)), cu_seqlens_k=cumsum(k_lens).to(device))
    elif layout == "paged":
        pages = [-(-n // page_size) for n in k_lens]
        num_blocks = sum(pages) + spare_pages
        perm = torch.randperm(num_blocks, generator=gen)
        k = torch.full((num_blocks, page_size, hkv, d), fill, dtype=dt, device=device)
        v = torch.full((num_blocks, page_size, hkv, dv), fill, dtype=dt, device=device)
        table = torch.randint(0, num_blocks, (batch, max(pages + [1])), generator=gen)
        nxt = 0
        for b, (n, p) in enumerate(zip(k_lens, pages)):
            ids = perm[nxt:nxt + p]
            nxt += p
            table[b, :p] = ids
            if p:
                kp = torch.full((p * page_size, hkv, d), fill, dtype=dt, device=device)
                vp = torch.full((p * page_size, hkv, dv), fill, dtype=dt, device=device)
                kp[:n], vp[:n] = ks[b], vs[b]
                k[ids.to(device)] = kp.view(p, page_size, hkv, d)
                v[ids.to(device)] = vp.view(p, page_size, hkv, dv)
        kw.update(k=k, v=v, block_table=table.to(torch.int32).to(device),
                  seqused_k=torch.tensor(k_lens, dtype=torch.int32, device=device))
    elif layout == "batched":
        smax = max(k_lens, default=0) + kv_gap
        k = torch.full((batch, smax, hkv, d), fill, dtype=dt, device=device)
        v = torch.full((batch, smax, hkv, dv), fill, dtype=dt, device=device)
        for b, n in enumerate(k_lens):
            k[b, :n], v[b, :n] = ks[b], vs[b]
        kw.update(k=k, v=v, seqused_k=torch.tensor(k_lens, dtype=torch.int32, device=device))
    else:
        raise ValueError(f"layout: expected paged, varlen or batched, got {layout!r}")
    kw.update(call)
    return kw


def reference_for_call(kw: Dict[str, Any], with_naive: bool = True):
    """(out fp32 (T, Hq, dv), lse (Hq, T), naive in q's dtype or None, rows covered by sequences) of a
    flash_attn_varlen_func call, from its kwargs (index tensors read on the host). Rows past cu_seqlens_q[-1]
    stay 0 / -inf."""
    q, k, v = kw["q"], kw["k"], kw["v"]
    total_q, hq, d = q.shape
    hkv, dv = k.shape[-2], v.shape[-1]
    cu_q = kw["cu_seqlens_q"].tolist()
    used = kw["seqused_k"].tolist() if kw.get("seqused_k") is not None else None
    cu_k = kw["cu_seqlens_k"].tolist() if kw.get("cu_seqlens_k") is not None else None
    bt = kw.get("block_table")
    opts = dict(scale=kw.get("softmax_scale") or d ** -0.5, causal=bool(kw.get("causal", False)),
                window=tuple(kw.get("window_size") or (-1, -1)), softcap=float(kw.get("softcap", 0.0)),
                sink=kw.get("s_aux"))
    out = torch.zeros(total_q, hq, dv, dtype=torch.float32, device=q.device)
    lse = torch.full((hq, total_q), float("-inf"), dtype=torch.float32, device=q.device)
    naive = torch.zeros(total_q, hq, dv, dtype=q.dtype, device=q.device) if with_naive else None
    for b in range(len(cu_q) - 1):
        a, e = cu_q[b], cu_q[b + 1]
        if a == e:
            continue
        if k.dim() == 3:
            kb, vb = k[cu_k[b]:cu_k[b + 1]], v[cu_k[b]:cu_k[b + 1]]
            if used is not None:
                kb, vb = kb[:used[b]], vb[:used[b]]
        elif bt is not None:
            n, page = used[b], k.shape[1]
            ids = bt[b, :-(-n // page)].long()
            kb, vb = k[ids].reshape(-1, hkv, d)[:n], v[ids].reshape(-1, hkv, dv)[:n]
        else:
            kb, vb = k[b, :used[b]], v[b, :used[b]]
        out[a:e], lse[:, a:e] = attention_ref(q[a:e], kb, vb, **opts)
        if with_naive:
            naive[a:e] = naive_same_dtype(q[a:e], kb, vb, **opts)
    return out, lse, naive, cu_q[-1]


def check_against_reference(kw: Dict[str, Any], out: torch.Tensor, lse: Optional[torch.Tensor]) -> CheckResult:
    """Every rule of flashseek.testing.tolerance on the rows the call's sequences cover."""
    ref, ref_lse, naive, n = reference_for_call(kw)
    name = {torch.bfloat16: "bf16", torch.float16: "fp16"}[kw["q"].dtype]
    return check_output(out[:n], ref[:n], naive[:n], dtype_name=name, softcap=float(kw.get("softcap", 0.0)),
                        lse=None if lse is None else lse[:, :n], ref_lse=None if lse is None else ref_lse[:, :n])


METADATA_MAGIC = 0x46534D44  # "FSMD": the first int of get_scheduler_metadata's buffer (SchedulerMetadataLayout)


def planned_splits(kw: Dict[str, Any]) -> Optional[int]:
    """The number of KV splits the library plans for this call (it plans from host values only, the same way
    for get_scheduler_metadata as for the call), read from the metadata header; None if the layout changed."""
    q, k, v = kw["q"], kw["k"], kw["v"]
    batch = kw["cu_seqlens_q"].numel() - 1
    used = kw.get("seqused_k")
    if used is None:
        used = torch.zeros(batch, dtype=torch.int32, device=q.device)
    md = flashseek.get_scheduler_metadata(
        batch_size=batch, max_seqlen_q=kw["max_seqlen_q"], max_seqlen_k=kw["max_seqlen_k"],
        num_heads_q=q.shape[1], num_heads_kv=k.shape[-2], headdim=q.shape[2], headdim_v=v.shape[-1],
        cache_seqlens=used, qkv_dtype=q.dtype, cu_seqlens_q=kw["cu_seqlens_q"],
        page_size=k.shape[1] if kw.get("block_table") is not None else None, causal=bool(kw.get("causal")),
        window_size=kw.get("window_size"), has_softcap=float(kw.get("softcap", 0.0)) > 0,
        num_splits=int(kw.get("num_splits", 0)))
    head = md[:2].tolist()
    return int(head[1]) if head[0] == METADATA_MAGIC else None


# ---- fuzzing --------------------------------------------------------------------------------------------------

def prepare_fuzz_inputs(case, device="cuda"):
    """make_inputs for the case, with s_aux in the case's dtype (the reference then sees the rounded sinks)."""
    s = case.scenario
    inputs = make_inputs(s, device, seed=case.case_seed)
    if s.sinks and case.sink_dtype == "bf16":
        sinks = inputs.kwargs["s_aux"].to(torch.bfloat16)
        inputs.kwargs["s_aux"] = sinks
        inputs.s_aux = sinks.float()
    return inputs


def run_fuzz_case(case, device="cuda") -> CheckResult:
    """Inputs -> one call -> every rule (flashseek.testing.run.check_call). Never raises: a case that cannot
    build, raises or fails its checks comes back with correct=False and the reason."""
    s = case.scenario
    try:
        inputs = prepare_fuzz_inputs(case, device)
    except Exception as exc:
        return failed(f"building inputs failed: {type(exc).__name__}: {exc}")
    try:
        out, lse = call_flashseek(s, inputs)
        sync(device)
    except Exception as exc:
        return failed(f"the call raised {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}")
    try:
        return check_call(s, inputs, out, lse)
    except Exception as exc:
        return failed(f"checking failed: {type(exc).__name__}: {exc}")
