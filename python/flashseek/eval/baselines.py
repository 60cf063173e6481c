"""Baselines: other kernels given the same inputs (the same q values and the same keys, as a dense copy where the
kernel has no paged path) and asked for the same work in one call.

A baseline that cannot do the scenario's work in one call (sinks, softcap, a feature it lacks, a ragged batch it can
only take padded at a large cost) is reported under not_comparable with the reason; so is one whose output does not
match the reference (then it did other work). One that raises is recorded as crashed and the run goes on.

  cudnn       torch SDPA, SDPBackend.CUDNN_ATTENTION, dense (B, H, S, d) batch; native GQA only
  fa2         torch's FlashAttention-2 varlen op (aten._flash_attention_forward): ragged, GQA, bottom-right causal,
              windows; on a dense varlen copy of the KV
  flex        torch FlexAttention, compiled once per shape outside timing; the batch packed as one sequence with a
              document mask (bottom-right causal and windows per sequence), softcap as score_mod
  fa3         flash_attn_interface (upstream FA3), when importable: paged via flash_attn_with_kvcache
  vllm        vllm.vllm_flash_attn (vLLM's FA3 fork, fa_version=3), when importable and FA3 runs here: the very same
              call as ours (paged/batched/varlen KV, scheduler_metadata, num_splits, sinks as bf16 s_aux); kvcache
              scenarios through its raw op _vllm_fa3_C.fwd (upstream FA3's flash_attn_with_kvcache call). On a
              machine without vLLM: the carry in .fa3/ (vLLM 0.26.0's _vllm_fa3_C only), see scripts/fa3_smoke.py
  flashinfer  BatchPrefillWithPagedKVCacheWrapper, when importable (plan outside timing)
Causal is bottom-right aligned everywhere (never top-left is_causal when q_len != k_len).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import torch

from flashseek.testing.grid import Scenario
from flashseek.testing.inputs import Inputs
from flashseek.testing.tolerance import vllm_rule

from flashseek.eval import BASELINES  # noqa: F401  (re-exported: the names this module implements)

MAX_PAD_FACTOR = 2.0  # a padded dense batch doing more than this multiple of the real work is not comparable


class NotComparable(Exception):
    """The baseline cannot do this scenario's work in one call; the message says why."""


@dataclass
class Prepared:
    fn: Callable[[], Any]  # the timed call
    to_varlen: Callable[[Any], torch.Tensor]  # its result as (total_q, Hq, dv), outside timing
    note: str = ""


def _put_fa3_carry_on_path() -> None:
    """The FA3 build carried to machines without network (.fa3/unpack.sh at the repository root, made by the fa3
    helper; docs/design.md): unpack it and put it on sys.path, so that however the evaluator is started, FA3 is
    in the run when the carry is there."""
    import subprocess
    from pathlib import Path
    for folder in Path(__file__).resolve().parents:
        script = folder / ".fa3" / "unpack.sh"
        if script.is_file():
            try:
                out = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=300)
            except (OSError, subprocess.SubprocessError):
                return
            path = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else ""
            if path and path not in sys.path:
                sys.path.insert(0, path)
            return


def availability(name: str) -> Optional[str]:
    """None when the baseline can run here, else why not."""
    mods = {"fa3": "flash_attn_interface", "vllm": "vllm.vllm_flash_attn", "flashinfer": "flashinfer"}
    if name == "vllm" and importlib.util.find_spec("vllm") is None:
        _put_fa3_carry_on_path()
    if name in mods:
        try:
            importlib.import_module(mods[name])
        except Exception as exc:
            return f"{mods[name]} is not importable ({type(exc).__name__})"
    if name == "vllm":
        try:
            from vllm.vllm_flash_attn import flash_attn_interface as vfi
            reason = vfi.fa_version_unsupported_reason(3)
        except Exception as exc:
            reason = f"vllm.vllm_flash_attn FA3 check failed ({type(exc).__name__}: {str(exc)[:200]})"
        if reason:
            return f"vllm.vllm_flash_attn: {reason}"
    if name == "flex":
        try:
            importlib.import_module("torch.nn.attention.flex_attention")
        except Exception as exc:
            return f"FlexAttention unavailable ({type(exc).__name__})"
    return None


# ---- dense copies of the scenario's data ----------------------------------------------------------------------

class Dense:
    """The scenario's q and keys as plain tensors: a varlen pack and, for uniform batches, a (B, H, S, d) batch."""

    def __init__(self, s: Scenario, inputs: Inputs):
        self.s = s
        seqs = [inputs.ref_seq(i) for i in range(s.batch_size)]
        self.q = inputs.ref_q  # (total_q, Hq, d) (after rotary for kvcache scenarios)
        self.k = torch.cat([r.k for r in seqs]) if seqs else None
        self.v = torch.cat([r.v for r in seqs]) if seqs else None
        self.q_lens, self.k_lens = inputs.q_lens, [r.k.shape[0] for r in seqs]
        dev = self.q.device
        self.cu_q = torch.tensor([0] + _cumsum(self.q_lens), dtype=torch.int32, device=dev)
        self.cu_k = torch.tensor([0] + _cumsum(self.k_lens), dtype=torch.int32, device=dev)
        self.uniform = len(set(zip(self.q_lens, self.k_lens))) == 1

    def batch(self):
        """(q, k, v) as (B, H, S, d) views for a uniform batch."""
        b, sq, sk = len(self.q_lens), self.q_lens[0], self.k_lens[0]
        q = self.q.reshape(b, sq, *self.q.shape[1:]).transpose(1, 2)
        k = self.k.reshape(b, sk, *self.k.shape[1:]).transpose(1, 2)
        v = self.v.reshape(b, sk, *self.v.shape[1:]).transpose(1, 2)
        return q, k, v


def _cumsum(xs: List[int]) -> List[int]:
    out, t = [], 0
    for x in xs:
        t += x
        out.append(t)
    return out


def _common_checks(s: Scenario, inputs: Inputs, name: Optional[str] = None) -> None:
    """Why no baseline (or not `name`) can run this scenario; nothing when some can."""
    if s.has_fp8:
        if not s.is_fp8:
            raise NotComparable("fp8 cache with a 16-bit q: no baseline here takes that (vLLM's FA3 takes q, k and v "
                                "all e4m3)")
        if name not in (None, "vllm"):
            raise NotComparable("fp8 scenario: this baseline takes bf16/fp16 only")
    if s.q_v or s.cp_world_size > 1:
        raise NotComparable("MLA decode / context parallel: no baseline does this call")
    if any(q == 0 or k == 0 for q, k in s.seqs):
        raise NotComparable("zero-length sequences (dense baselines produce NaN rows there)")


def _bottom_right_mask(s: Scenario, sq: int, sk: int, device) -> Optional[torch.Tensor]:
    """Bool (sq, sk), True = attend, per semantics.md; None when nothing is masked."""
    left, right = s.effective_window
    if not s.causal and left < 0 and right < 0:
        return None
    i = torch.arange(sq, device=device)[:, None] + (sk - sq)
    j = torch.arange(sk, device=device)[None, :]
    ok = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if s.causal:
        ok &= j <= i
    elif right >= 0:
        ok &= j <= i + right
    if left >= 0:
        ok &= j >= i - left
    return None if bool(ok.all()) else ok


# ---- the baselines ----------------------------------------------------------------------------------------------

def _cudnn(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    from torch.nn.attention import SDPBackend
    return sdpa_prepared(s, dense, SDPBackend.CUDNN_ATTENTION)


def sdpa_prepared(s: Scenario, dense: Dense, backend) -> Prepared:
    """torch SDPA restricted to one backend (CUDNN_ATTENTION for the cudnn baseline; MATH in the CPU tests, which
    check the batching, masks and layout conversion against the reference)."""
    from torch.nn.attention import sdpa_kernel
    if s.sinks:
        raise NotComparable("no sinks in SDPA")
    if s.softcap:
        raise NotComparable("no softcap in SDPA")
    note = "dense (B, H, S, d) copy of the KV"
    if dense.uniform:
        q, k, v = dense.batch()
        sq, sk = dense.q_lens[0], dense.k_lens[0]
        mask = _bottom_right_mask(s, sq, sk, q.device)
        is_causal = False
        if mask is not None and s.causal and sq == sk and s.effective_window[0] < 0:
            mask, is_causal = None, True  # square causal: top-left == bottom-right
        if mask is not None:
            note += "; explicit bottom-right mask"
        to_varlen = lambda o: o.transpose(1, 2).reshape(-1, o.shape[1], o.shape[3])  # noqa: E731
    else:
        b, sq, sk = len(dense.q_lens), max(dense.q_lens), max(dense.k_lens)
        factor = b * sq * sk / sum(a * c for a, c in zip(dense.q_lens, dense.k_lens))
        if factor > MAX_PAD_FACTOR:
            raise NotComparable(f"ragged batch: a padded dense batch would do {factor:.1f}x the work")
        q = dense.q.new_zeros(b, sq, *dense.q.shape[1:])
        k = dense.k.new_zeros(b, sk, *dense.k.shape[1:])
        v = dense.v.new_zeros(b, sk, *dense.v.shape[1:])
        mask = torch.zeros(b, 1, sq, sk, dtype=torch.bool, device=q.device)
        for i, (a, c) in enumerate(zip(dense.q_lens, dense.k_lens)):
            q[i, :a] = dense.q[dense.cu_q[i]:dense.cu_q[i] + a]
            k[i, :c] = dense.k[dense.cu_k[i]:dense.cu_k[i] + c]
            v[i, :c] = dense.v[dense.cu_k[i]:dense.cu_k[i] + c]
            m = _bottom_right_mask(s, a, c, q.device)
            mask[i, 0, :a, :c] = True if m is None else m
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        is_causal = False
        note += f"; padded batch with a mask ({factor:.2f}x the work)"
        rows = torch.cat([torch.arange(a, device=q.device) + i * sq for i, a in enumerate(dense.q_lens)])
        to_varlen = lambda o: o.transpose(1, 2).reshape(-1, o.shape[1], o.shape[3])[rows]  # noqa: E731
    gqa = s.num_heads_q != s.num_heads_kv

    def fn():
        with sdpa_kernel([backend]):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=is_causal, scale=s.scale, enable_gqa=gqa)
    return Prepared(fn, to_varlen, note)


def _fa2(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    if s.sinks:
        raise NotComparable("no sinks in torch's FA2")
    if s.softcap:
        raise NotComparable("no softcap in torch's FA2 op")
    left, right = s.effective_window
    wl = left if left >= 0 else None
    wr = right if right >= 0 else None
    if s.causal:
        wr = 0 if wl is not None else None
    if (wl is None) != (wr is None):  # the op takes both or neither; -1 is FA2's "unbounded"
        wl, wr = (-1 if wl is None else wl), (-1 if wr is None else wr)
    q, k, v = dense.q, dense.k, dense.v
    max_q, max_k = max(dense.q_lens), max(dense.k_lens)

    def fn():
        return torch.ops.aten._flash_attention_forward(
            q, k, v, dense.cu_q, dense.cu_k, max_q, max_k, 0.0, s.causal, False, scale=s.scale,
            window_size_left=wl, window_size_right=wr)[0]
    return Prepared(fn, lambda o: o, "varlen (total, H, d) copy of the KV; FA2 causal is bottom-right")


_FLEX_COMPILED = None


def _flex(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    global _FLEX_COMPILED
    from torch.nn.attention.flex_attention import flex_attention
    if _FLEX_COMPILED is None:
        _FLEX_COMPILED = torch.compile(flex_attention, dynamic=False)
    return flex_prepared(s, dense, _FLEX_COMPILED, compile_mask=True)


def flex_prepared(s: Scenario, dense: Dense, attention, compile_mask: bool) -> Prepared:
    """FlexAttention over the packed batch (`attention` is the compiled flex_attention on the GPU, the eager one in
    the CPU tests)."""
    from torch.nn.attention.flex_attention import create_block_mask
    if s.sinks:
        raise NotComparable("no sinks in FlexAttention (it cannot add a term to the denominator only)")
    dev = dense.q.device
    doc_q = torch.repeat_interleave(torch.arange(len(dense.q_lens), device=dev),
                                    torch.tensor(dense.q_lens, device=dev))
    doc_k = torch.repeat_interleave(torch.arange(len(dense.k_lens), device=dev),
                                    torch.tensor(dense.k_lens, device=dev))
    pos_q = torch.arange(dense.q.shape[0], device=dev) - dense.cu_q[:-1].long()[doc_q]
    pos_k = torch.arange(dense.k.shape[0], device=dev) - dense.cu_k[:-1].long()[doc_k]
    offset = (torch.tensor(dense.k_lens, device=dev) - torch.tensor(dense.q_lens, device=dev))
    diag_q = pos_q + offset[doc_q]  # bottom-right alignment per sequence
    left, right = s.effective_window
    causal = s.causal

    def mask_mod(b, h, qi, ki):
        ok = doc_q[qi] == doc_k[ki]
        d, p = diag_q[qi], pos_k[ki]
        if causal:
            ok = ok & (p <= d)
        elif right >= 0:
            ok = ok & (p <= d + right)
        if left >= 0:
            ok = ok & (p >= d - left)
        return ok

    tq, tk = dense.q.shape[0], dense.k.shape[0]
    block_mask = create_block_mask(mask_mod, 1, None, tq, tk, device=dev, _compile=compile_mask)
    cap = s.softcap
    score_mod = (lambda score, b, h, qi, ki: cap * torch.tanh(score / cap)) if cap > 0 else None
    q, k, v = (t.unsqueeze(0).transpose(1, 2) for t in (dense.q, dense.k, dense.v))
    gqa = s.num_heads_q != s.num_heads_kv

    def fn():
        return attention(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=s.scale, enable_gqa=gqa)
    return Prepared(fn, lambda o: o[0].transpose(0, 1),
                    "one packed sequence with a document mask over a varlen copy of the KV; compiled per shape")


def _fa3(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    import flash_attn_interface as fa3
    if s.sinks:
        raise NotComparable("upstream FA3 has no s_aux sinks")
    kw = inputs.kwargs
    common = dict(softmax_scale=s.scale, causal=s.causal, window_size=s.window, softcap=s.softcap)
    if s.entry == "varlen" and s.kv_layout == "paged":
        q = dense.q

        def fn():
            return fa3.flash_attn_with_kvcache(q, kw["k"], kw["v"], cache_seqlens=kw["seqused_k"],
                                               page_table=kw["block_table"], cu_seqlens_q=kw["cu_seqlens_q"],
                                               max_seqlen_q=kw["max_seqlen_q"], num_splits=s.num_splits, **common)
        note = "paged cache through flash_attn_with_kvcache (varlen q)"
    else:
        def fn():
            return fa3.flash_attn_varlen_func(dense.q, dense.k, dense.v, dense.cu_q, dense.cu_k,
                                              max(dense.q_lens), max(dense.k_lens), **common)
        note = "varlen copy of the KV"

    def to_varlen(o):
        return o[0] if isinstance(o, tuple) else o
    return Prepared(fn, to_varlen, note + " (unverified on this machine's software)")


def _vllm_version() -> str:
    try:
        import vllm
        carry = " (FA3-only carry)" if getattr(vllm, "FLASHSEEK_CARRY", None) else ""
        return f"vLLM {getattr(vllm, '__version__', '?')}{carry}"
    except Exception:
        return "vLLM ?"


def _bf16_sinks(s_aux: Optional[torch.Tensor]):
    """vLLM's FA3 takes s_aux in bf16 only ("We only support bf16 dtype for S aux"); ours in fp32. Returns the bf16
    copy and a note when the rounding changed a value (the output check then judges whether it still matches)."""
    if s_aux is None or s_aux.dtype == torch.bfloat16:
        return s_aux, ""
    b = s_aux.to(torch.bfloat16).contiguous()
    exact = bool(torch.equal(b.float(), s_aux.float()))
    return b, "" if exact else "; s_aux rounded to bf16 (the build takes bf16 sinks only)"


def _vllm(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    from vllm.vllm_flash_attn import flash_attn_varlen_func, get_scheduler_metadata
    version = _vllm_version()
    if s.entry == "kvcache":
        return _vllm_kvcache(s, inputs, version)
    kw = dict(inputs.kwargs)
    if kw.get("out") is not None:
        kw["out"] = torch.empty_like(kw["out"])  # never write into our out
    kw["fa_version"] = 3
    kw["s_aux"], sink_note = _bf16_sinks(kw.get("s_aux"))
    if kw["s_aux"] is None:
        kw.pop("s_aux")
    if inputs.metadata_kwargs is not None:
        kw["scheduler_metadata"] = get_scheduler_metadata(**inputs.metadata_kwargs)
    ret_lse = s.return_lse

    def fn():
        return flash_attn_varlen_func(**kw)
    note = "the same call on the same paged cache" + ("; cascade timed as one plain call" if s.entry == "cascade"
                                                      else "")
    return Prepared(fn, lambda o: o[0] if ret_lse else o, f"{note}{sink_note}; {version}, fa_version=3")


def _vllm_kvcache(s: Scenario, inputs: Inputs, version: str) -> Prepared:
    """Upstream FA3's flash_attn_with_kvcache call on vLLM's FA3 op (its Python wrapper has varlen only): q flattened
    to varlen rows (the build is varlen-only), the cache with cache_seqlens as seqused_k, the new k/v appended in place
    (the same values at the same slots as our call, so the cache ends as our call left it)."""
    import vllm.vllm_flash_attn  # noqa: F401  (loads and registers _vllm_fa3_C)
    kw = inputs.kwargs
    q = kw["q"]
    batch, sq, hq, d = q.shape
    q_flat = q.reshape(batch * sq, hq, d)
    cu_q = torch.arange(0, (batch + 1) * sq, sq, dtype=torch.int32, device=q.device)
    s_aux, sink_note = _bf16_sinks(kw.get("s_aux"))
    left, right = (-1, -1) if kw.get("window_size") is None else tuple(kw["window_size"])
    scale = kw.get("softmax_scale")
    scale = d ** -0.5 if scale is None else scale
    op = torch.ops._vllm_fa3_C.fwd

    def fn():
        return op(q_flat, kw["k_cache"], kw["v_cache"], kw.get("k"), kw.get("v"), None, None,
                  cu_q, None, None, None, kw["cache_seqlens"], sq, None,
                  kw.get("page_table"), kw.get("cache_batch_idx"), kw.get("cache_leftpad"),
                  kw.get("rotary_cos"), kw.get("rotary_sin"), None,
                  None, None, None,
                  float(scale), bool(kw.get("causal", False)), int(left), int(right), float(kw.get("softcap", 0.0)),
                  bool(kw.get("rotary_interleaved", True)), None, int(kw.get("num_splits", 0)), None, 0,
                  s_aux, 1, 0, None)[0]
    return Prepared(fn, lambda o: o, "flash_attn_with_kvcache's call on the raw op _vllm_fa3_C.fwd (varlen q rows)"
                    f"{sink_note}; {version}")


def _flashinfer(s: Scenario, inputs: Inputs, dense: Dense) -> Prepared:
    import flashinfer
    if s.sinks:
        raise NotComparable("sinks not wired for FlashInfer here")
    if s.kv_layout != "paged" or s.entry == "kvcache":
        raise NotComparable("FlashInfer baseline wired for vLLM's paged layout only")
    left, right = s.effective_window
    if not s.causal and right >= 0:
        raise NotComparable("FlashInfer has no right window")
    kw = inputs.kwargs
    page = s.page_size
    table = kw["block_table"].cpu()
    indices, indptr, last = [], [0], []
    for i, n in enumerate(inputs.k_lens):
        pages = -(-n // page)
        indices += table[i, :pages].tolist()
        indptr.append(indptr[-1] + pages)
        last.append(n - (pages - 1) * page)
    dev = kw["q"].device
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=dev)  # noqa: E731
    layout = "HND" if s.hnd else "NHD"
    kc, vc = (kw["k"].permute(0, 2, 1, 3), kw["v"].permute(0, 2, 1, 3)) if s.hnd else (kw["k"], kw["v"])
    ws = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(ws, kv_layout=layout)
    wrapper.plan(kw["cu_seqlens_q"], i32(indptr), i32(indices), i32(last), s.num_heads_q, s.num_heads_kv,
                 s.head_dim, page, causal=s.causal, window_left=left, logits_soft_cap=s.softcap or None,
                 sm_scale=s.scale, q_data_type=dense.q.dtype, kv_data_type=kc.dtype, head_dim_vo=s.head_dim_v)
    q = dense.q

    def fn():
        return wrapper.run(q, (kc, vc))
    return Prepared(fn, lambda o: o, "paged prefill wrapper, plan() outside timing (unverified here)")


# RuntimeError texts that mean "this build cannot do that", not a crash (FA3 / vLLM FA3 TORCH_CHECKs)
_BUILD_LIMITS = ("This flash attention build", "only supports head dimension", "We only support",
                 "is currently only supported", "We don't support", "only supports num_splits",
                 "If V headdim is different")

_BUILDERS = {"cudnn": _cudnn, "fa2": _fa2, "flex": _flex, "fa3": _fa3, "vllm": _vllm, "flashinfer": _flashinfer}


def prepare(name: str, s: Scenario, inputs: Inputs, dense: Dense, ref_out: torch.Tensor) -> Prepared:
    """Build the baseline's call and check, once and outside timing, that it computes what we compute.
    Raises NotComparable (with the reason) or whatever the baseline raised."""
    _common_checks(s, inputs, name)
    prep = _BUILDERS[name](s, inputs, dense)
    try:
        first = prep.fn()
    except RuntimeError as exc:
        text = str(exc)
        # a feature compiled out of the build, or a limit it states (vLLM's FA3: no in-kernel KV append, ...)
        for key in _BUILD_LIMITS:
            if key in text:
                line = next((ln for ln in text.splitlines() if key in ln), text)
                raise NotComparable(f"the build says: {line.strip()[:200]}") from None
        raise
    out = prep.to_varlen(first)
    if out.is_cuda:
        torch.cuda.synchronize()
    ok, why = vllm_rule(out, ref_out, s.rule_dtype) if out.shape == ref_out.shape else (False, f"shape {tuple(out.shape)}")
    if not ok:
        raise NotComparable(f"output differs from the reference ({why[:160]})")
    return prep
