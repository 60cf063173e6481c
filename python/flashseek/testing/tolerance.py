"""Pass rules (semantics.md, 'Tolerance used by the incumbents') and a comparator that names the worst element.

FA3's relative rule: max|out - ref| <= k * max|naive - ref| + 2 * (rounding of one add at magnitude 0.3 in the
output dtype), k = 2 (3 with softcap), ref the fp32 reference and naive the same-dtype naive. Both errors are
measured against the fp32 reference (FA3's tests measure against the reference rounded to the dtype; doing both
sides in fp32 keeps the comparison fair and lets `err` mean what results-schema.md says). On the kvcache path
also mean|out - ref| <= 1.5 * mean|naive - ref|.

vLLM's absolute rule: |out - ref| <= 1.5e-2 + 1e-2 * |ref| element-wise (bf16/fp16); 0.15 / 0.15 for fp8.

fp8 (e4m3 q/k/v, or a 16-bit q against an e4m3 cache): FA3's fp8 rule with naive = naive_fp8 (dequantized inputs
in bf16, logits in bf16, P rounded to e4m3): max err <= 4 x naive max err + the rounding term, and mean err <= 3 x
naive mean err, both against the fp32 reference on the dequantized values; and vLLM's 0.15 / 0.15 against the
reference on the unquantized values (what the e4m3 values were cast from, times the descales), as vLLM's fp8
test compares; there an element counts only where the exact fp32 result on the quantized inputs stays inside the
rule (over 10^8 elements a few exceed it whatever the kernel: that is the quantization of the inputs), by at least
4 x the naive's error at that element (the FA3 fp8 multiplier, element-wise). Without a naive (fa3=False) fp8
is checked with vLLM's rule alone.

LSE, fp32, where returned: rows whose reference is -inf must be exactly -inf; finite rows within
|lse - ref| <= LSE_ATOL + LSE_RTOL * |ref|. Why these numbers: the kernel forms each logit from the same bf16/fp16
values as the reference with fp32 accumulation (error ~ d * 2^-24 * sum|q_i k_i| * scale, about 1e-5 here) and
sums exponentials in fp32 (relative ~1e-6 per add, blocked); hardware exp2/log2 approximations add ~2 ulp. 2e-4
is ~20x that, yet a mask that admits or drops one key of a thousand moves the LSE by ~1e-3, so off-by-one masks
still fail. With softcap the kernel may use tanh.approx.f32 (relative error 2^-11): on scaled logits up to ~8 in
magnitude that is up to 4e-3, so softcap rows get 4e-3 more. e4m3 q, k and v: the e4m3 tensor-core product
accumulates with fewer bits than fp32 (about 13-14 at d 128, as FA3's native fp8 path), so the logits carry ~1e-3
relative error; there the bound is FA3's fp8 multiplier on the naive's LSE error (naive_fp8: logits in bf16),
4 x max|naive_lse - ref| + LSE_ATOL, where that is looser. Masks are the same code as the 16-bit tiles', whose
LSE keeps the strict bound.

NaN or Inf anywhere in the output fails.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Optional, Tuple

try:
    import torch
except ImportError:  # the pure-Python rules below still import (CI without torch)
    torch = None

FA3_MULT = 2.0
FA3_MULT_SOFTCAP = 3.0
FA3_MEAN_MULT_KVCACHE = 1.5
FA3_FP8_MULT, FA3_FP8_MEAN_MULT = 4.0, 3.0
VLLM_ATOL, VLLM_RTOL = 1.5e-2, 1e-2
VLLM_FP8_ATOL, VLLM_FP8_RTOL = 0.15, 0.15
LSE_ATOL, LSE_RTOL = 2e-4, 1e-5
LSE_SOFTCAP_EXTRA = 4e-3
CASCADE_VS_PLAIN_TOL = 1e-2  # vLLM's cascade test: merged result against one plain call, atol = rtol = 1e-2


# ---- pure-Python pieces ------------------------------------------------------------------------------------------

def fa3_bound(naive_err: float, rounding_atol: float, softcap: float) -> float:
    """The FA3 bound: multiplier * naive error + the rounding term (already doubled, as FA3 writes it)."""
    mult = FA3_MULT_SOFTCAP if softcap > 0 else FA3_MULT
    return mult * naive_err + rounding_atol


def lse_tolerance(ref: float, softcap: float) -> float:
    return LSE_ATOL + (LSE_SOFTCAP_EXTRA if softcap > 0 else 0.0) + LSE_RTOL * abs(ref)


def vllm_tolerances(dtype_name: str) -> Tuple[float, float]:
    return (VLLM_FP8_ATOL, VLLM_FP8_RTOL) if dtype_name == "e4m3" else (VLLM_ATOL, VLLM_RTOL)


@dataclass
class Worst:
    """The element that decided a comparison: its index (token, head, dim), value, reference and error."""
    index: Tuple[int, ...]
    value: float
    ref: float
    err: float

    def __str__(self) -> str:
        return f"at {self.index}: got {self.value:.6g}, ref {self.ref:.6g} (|diff| {self.err:.3g})"


@dataclass
class CheckResult:
    correct: bool
    err: float = float("nan")  # max |out - ref_fp32|
    err_bound: float = float("nan")  # the FA3 bound it had to meet (for fp8: vLLM's atol + rtol * max|ref|)
    reason: str = ""  # empty when correct; otherwise every rule that failed, with its worst element
    naive_err: float = float("nan")
    mean_err: float = float("nan")
    naive_mean_err: float = float("nan")
    lse_err: Optional[float] = None
    lse_bound: Optional[float] = None
    worst: Optional[Worst] = None
    error: Optional[str] = None  # the scenario could not run (unsupported, crashed)
    unsupported: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        d["worst"] = None if self.worst is None else str(self.worst)
        return d

    def summary(self) -> str:
        if self.error:
            return f"ERROR {self.error}"
        head = f"err {self.err:.3g} <= bound {self.err_bound:.3g}" if self.correct else self.reason
        return ("PASS " if self.correct else "FAIL ") + head


def failed(error: str, unsupported: bool = False) -> CheckResult:
    return CheckResult(correct=False, reason=error, error=error, unsupported=unsupported)


# ---- tensor comparisons ------------------------------------------------------------------------------------------

def _index(flat: int, shape) -> Tuple[int, ...]:
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return tuple(reversed(idx))


def worst_element(out, ref) -> Optional[Worst]:
    """The worst element of out against ref: a non-finite value first, else the largest |out - ref|."""
    if out.numel() == 0:
        return None
    o, r = out.float(), ref.float()
    bad = ~torch.isfinite(o)
    if bad.any():
        flat = int(bad.flatten().nonzero()[0].item())
    else:
        flat = int((o - r).abs().flatten().argmax().item())
    val, rv = float(o.flatten()[flat].item()), float(r.flatten()[flat].item())
    return Worst(_index(flat, out.shape), val, rv, abs(val - rv) if math.isfinite(val) else float("inf"))


def rounding_atol(ref, dtype) -> float:
    """FA3's `2 * (out_ref + 0.3 - 0.3 - out_ref).abs().max()`, computed in the output dtype."""
    if ref.numel() == 0 or dtype == torch.float32:
        return 0.0
    r = ref.to(dtype)
    return 2.0 * float((((r + 0.3) - 0.3) - r).abs().max().float().item())


def max_abs(a, b) -> float:
    return float((a.float() - b.float()).abs().max().item()) if a.numel() else 0.0


def mean_abs(a, b) -> float:
    return float((a.float() - b.float()).abs().mean().item()) if a.numel() else 0.0


def torch_where(cond, a, b):
    import torch  # the module imports without torch (CPU tooling); only tensors reach here
    return torch.where(cond, a, b)


def vllm_rule(out, ref, dtype_name: str, floor=None, floor_slack=None) -> Tuple[bool, str]:
    """floor (fp8 against the unquantized values): the exact result on the quantized inputs. vLLM's fp8 rule then
    measures the quantization of the inputs as much as the kernel; over 10^8 elements a few exceed it whatever
    the kernel, so an element counts only where the floor stays inside, by floor_slack (element-wise: the
    kernel's own allowed error there; without it the floor may sit a bf16 rounding inside the bound, and the
    output's rounding alone crossed it: fp8 d192, seed 952807915, 0.165 against 0.1648)."""
    atol, rtol = vllm_tolerances(dtype_name)
    if out.numel() == 0:
        return True, ""
    diff = (out.float() - ref.float()).abs()
    allowed = atol + rtol * ref.float().abs()
    over = diff > allowed
    if floor is not None:
        slack = floor_slack.float() if floor_slack is not None else 0.0
        over &= (floor.float() - ref.float()).abs() + slack <= allowed
        if not over.any():
            return True, ""
        diff = torch_where(over, diff, allowed)
    if not over.any():
        return True, ""
    n = int(over.sum().item())
    flat = int((diff - allowed).flatten().argmax().item())
    o, r = float(out.flatten()[flat].float().item()), float(ref.flatten()[flat].float().item())
    return False, (f"vLLM rule (atol {atol:g}, rtol {rtol:g}): {n} of {out.numel()} elements outside, worst "
                   f"{Worst(_index(flat, out.shape), o, r, abs(o - r))}")


def lse_rule(lse, ref_lse, softcap: float, naive_lse=None) -> Tuple[bool, float, float, str]:
    """Returns (ok, max error over finite rows, its bound, reason). naive_lse (e4m3 q/k/v): the bound is at least
    FA3_FP8_MULT x the naive's max LSE error + LSE_ATOL."""
    lse, ref_lse = lse.float(), ref_lse.float()
    if lse.shape != ref_lse.shape:
        return False, float("inf"), 0.0, f"LSE shape {tuple(lse.shape)}, expected {tuple(ref_lse.shape)}"
    if lse.numel() == 0:
        return True, 0.0, LSE_ATOL, ""
    if torch.isnan(lse).any():
        flat = int(torch.isnan(lse).flatten().nonzero()[0].item())
        return False, float("nan"), 0.0, f"LSE NaN at (head, token) {_index(flat, lse.shape)}"
    ref_inf = torch.isinf(ref_lse)
    mismatch = ref_inf != torch.isinf(lse)
    mismatch |= ref_inf & (lse != ref_lse)  # -inf must stay -inf (no +inf where a row saw no key)
    if mismatch.any():
        flat = int(mismatch.flatten().nonzero()[0].item())
        i = _index(flat, lse.shape)
        return False, float("inf"), 0.0, (f"LSE at (head, token) {i}: got {lse[i].item():.6g}, ref "
                                          f"{ref_lse[i].item():.6g} (masked rows must be -inf, others finite)")
    fin = ~ref_inf
    if not fin.any():
        return True, 0.0, LSE_ATOL, ""
    diff = (lse - ref_lse).abs()
    allowed = LSE_ATOL + (LSE_SOFTCAP_EXTRA if softcap > 0 else 0.0) + LSE_RTOL * ref_lse.abs()
    if naive_lse is not None:
        naive_lse = naive_lse.float()
        naive_err = float(torch.where(fin & torch.isfinite(naive_lse), (naive_lse - ref_lse).abs(),
                                      torch.zeros_like(ref_lse)).max().item())
        allowed = torch.clamp(allowed, min=FA3_FP8_MULT * naive_err + LSE_ATOL)
    excess = torch.where(fin, diff - allowed, torch.full_like(diff, -1.0))
    err = float(torch.where(fin, diff, torch.zeros_like(diff)).max().item())
    flat = int(excess.flatten().argmax().item())
    i = _index(flat, lse.shape)
    bound = float(allowed[i].item())
    if excess[i].item() > 0:
        return False, err, bound, (f"LSE at (head, token) {i}: got {lse[i].item():.7g}, ref {ref_lse[i].item():.7g}"
                                   f" (|diff| {diff[i].item():.3g} > {bound:.3g})")
    return True, err, bound, ""


def check_output(out, ref, naive, *, dtype_name: str, softcap: float, kvcache: bool = False,
                 lse=None, ref_lse=None, fa3: bool = True, ref_unquantized=None, naive_lse=None) -> CheckResult:
    """Every rule on one output. out (T, Hq, dv) in the output dtype, ref fp32, naive in the dtype (bf16 from
    naive_fp8 for fp8); lse / ref_lse (Hq, T) fp32 when LSE was returned; ref_unquantized (fp8) the fp32 reference
    on the unquantized values, which vLLM's rule then judges against. fa3=False (or no naive) checks vLLM's rule
    alone; err_bound is then its loosest element bound, atol + rtol * max|ref|."""
    reasons = []
    if out.shape != ref.shape:
        return CheckResult(False, reason=f"out shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    worst = worst_element(out, ref)
    finite = bool(torch.isfinite(out.float()).all().item()) if out.numel() else True
    if not finite:
        n = int((~torch.isfinite(out.float())).sum().item())
        reasons.append(f"{n} non-finite output elements, first {worst}")
    err = max_abs(out, ref) if finite else float("inf")
    res = CheckResult(correct=False, err=err, worst=worst, mean_err=mean_abs(out, ref) if finite else float("inf"))
    fp8 = dtype_name == "e4m3"
    vllm_ref = ref_unquantized if fp8 and ref_unquantized is not None else ref
    if not fa3 or naive is None:
        atol, rtol = vllm_tolerances(dtype_name)
        res.err_bound = atol + rtol * (float(vllm_ref.abs().max().item()) if ref.numel() else 0.0)
    else:
        res.naive_err = max_abs(naive, ref)
        res.naive_mean_err = mean_abs(naive, ref)
        if fp8:
            res.err_bound = FA3_FP8_MULT * res.naive_err + rounding_atol(ref, out.dtype)
            mean_mult, mean_rule = FA3_FP8_MEAN_MULT, "FA3 fp8 mean rule"
        else:
            res.err_bound = fa3_bound(res.naive_err, rounding_atol(ref, out.dtype), softcap)
            mean_mult, mean_rule = FA3_MEAN_MULT_KVCACHE, "FA3 kvcache mean rule"
        if finite and err > res.err_bound:
            reasons.append(f"FA3 {'fp8 ' if fp8 else ''}rule: max err {err:.4g} > bound {res.err_bound:.4g} "
                           f"(naive err {res.naive_err:.4g}), worst {worst}")
        if finite and (kvcache or fp8) and res.mean_err > mean_mult * res.naive_mean_err + 1e-7:
            reasons.append(f"{mean_rule}: mean err {res.mean_err:.4g} > {mean_mult:g} x naive "
                           f"mean {res.naive_mean_err:.4g}")
    if finite:
        # The floor is the exact result on the quantized inputs (ref): where even it is outside vLLM's rule, the
        # miss is the inputs' quantization, which no kernel can remove.
        floor = ref if (fp8 and vllm_ref is not ref) else None
        # The margin the floor must keep: FA3's fp8 multiplier on a same-precision naive's error at that element
        # (the error the FA3 rule grants the kernel, element-wise), so an element near the bound counts only if
        # the kernel erred more than 4x the naive there.
        slack = (FA3_FP8_MULT * (naive.float() - ref.float()).abs()
                 if floor is not None and naive is not None and naive.shape == ref.shape else None)
        ok, why = vllm_rule(out, vllm_ref, dtype_name, floor=floor, floor_slack=slack)
        if not ok:
            reasons.append(why + (" (against the unquantized inputs, where the exact result on the quantized inputs is inside)"
                                  if floor is not None else
                                  " (against the unquantized inputs)" if vllm_ref is not ref else ""))
    if lse is not None and ref_lse is not None:
        ok, lerr, lbound, why = lse_rule(lse, ref_lse, softcap, naive_lse=naive_lse if fp8 else None)
        res.lse_err, res.lse_bound = lerr, lbound
        if not ok:
            reasons.append(why)
    res.correct = not reasons
    res.reason = "; ".join(reasons)
    return res
