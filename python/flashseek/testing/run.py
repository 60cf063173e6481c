"""One scenario end to end: inputs -> flashseek call -> reference -> tolerance. Used by the GPU tests and the
evaluator, so both judge a scenario the same way.

  prepare_call(s, inputs)   a zero-argument function doing exactly the scenario's call(s) (what is timed)
  call_flashseek(s, inputs) (out (T, Hq, dv), lse (Hq, T) or None), whatever the entry point
  check_call(s, inputs, out, lse)  every rule, plus the side conditions (out written in place and nowhere else,
                            the kvcache append, the cascade against one plain call)
  check_scenario(s, device, seed)  all of the above on fresh inputs
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

import torch

import flashseek
from flashseek.testing.grid import Scenario
from flashseek.testing.inputs import Inputs, make_inputs
from flashseek.testing.reference import RefOutputs, reference_outputs
from flashseek.testing.tolerance import CASCADE_VS_PLAIN_TOL, CheckResult, check_output, failed, max_abs


def scheduler_metadata(inputs: Inputs):
    """get_scheduler_metadata as vLLM calls it, once per step (outside any timing)."""
    if inputs.metadata_kwargs is None:
        return None
    return flashseek.get_scheduler_metadata(**inputs.metadata_kwargs)


def _split(result, return_lse: bool):
    if return_lse:
        out, lse = result
        return out, lse
    return result, None


def prepare_call(s: Scenario, inputs: Inputs, plain: bool = False) -> Callable[[], Tuple[Any, Any]]:
    """The call(s) of one engine step for this scenario, as a function of nothing (so it can be timed and graph
    captured). Returns (out, lse) with out (T, Hq, dv) and lse (Hq, T) or None. `plain` turns a cascade scenario
    into its single plain call (the cascade's comparison point)."""
    kw = dict(inputs.kwargs)
    if s.entry == "kvcache":
        batch, sq = s.batch_size, s.q_lens[0]

        def call_kvcache():
            res = flashseek.flash_attn_with_kvcache(**kw)
            out, lse = _split(res, s.return_lse)
            out = out.reshape(batch * sq, s.num_heads_q, s.head_dim_v)
            if lse is not None:  # (B, Hq, Sq) -> (Hq, B * Sq)
                lse = lse.permute(1, 0, 2).reshape(s.num_heads_q, batch * sq)
            return out, lse
        return call_kvcache

    md = scheduler_metadata(inputs)
    if md is not None:
        kw["scheduler_metadata"] = md
    if s.entry == "cascade" and not plain:
        pre, suf = dict(inputs.cascade["prefix"]), dict(inputs.cascade["suffix"])
        out = inputs.out

        def call_cascade():
            p_out, p_lse = flashseek.flash_attn_varlen_func(**pre)
            s_out, s_lse = flashseek.flash_attn_varlen_func(**suf)
            dst = out if out is not None else torch.empty_like(p_out)
            flashseek.merge_attn_states(dst, p_out, p_lse, s_out, s_lse)
            return dst, None
        return call_cascade
    if s.entry == "cascade":
        kw["out"] = None  # the plain call must not write the cascade's out

    def call_varlen():
        return _split(flashseek.flash_attn_varlen_func(**kw), s.return_lse)
    return call_varlen


def call_flashseek(s: Scenario, inputs: Inputs) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """(out, lse) of the scenario's call on these inputs."""
    return prepare_call(s, inputs)()


# --------------------------------------------------------------------------------------------------------------

def _bits(t: torch.Tensor) -> torch.Tensor:
    """Same-size integer view, so that equality is bitwise (NaN == NaN when the bits agree)."""
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    return t.view(ints[t.element_size()])


def _check_side_conditions(s: Scenario, inputs: Inputs, out: torch.Tensor, res: CheckResult) -> None:
    reasons = []
    if s.out_given and inputs.out is not None and s.entry != "kvcache":
        if out.data_ptr() != inputs.out.data_ptr():
            reasons.append("the given out was not the returned tensor (the result must be written in place)")
        if inputs.out_pad_snapshot is not None:
            pad = inputs.out_buffer[:, inputs.out.shape[1] * inputs.out.shape[2]:]
            if not torch.equal(_bits(pad), _bits(inputs.out_pad_snapshot)):
                reasons.append("the call wrote into the padding of out's rows (past the view)")
    if inputs.expected_caches is not None:
        for name, got, exp in zip(("k_cache", "v_cache"), (inputs.kwargs["k_cache"], inputs.kwargs["v_cache"]),
                                  inputs.expected_caches):
            # appended slots may differ from the reference rotary by rounding; everything else must be untouched
            same = _bits(got) == _bits(exp)
            close = (got.float() - exp.float()).abs() <= 1e-2 + 1e-2 * exp.float().abs()
            if not bool((same | close).all().item()):
                bad = (~(same | close)).nonzero()[0].tolist()
                reasons.append(f"{name} after the append differs from the expected cache at {bad}: got "
                               f"{got[tuple(bad)].item():.5g}, expected {exp[tuple(bad)].item():.5g}")
    if reasons:
        res.correct = False
        res.reason = "; ".join(([res.reason] if res.reason else []) + reasons)


def check_call(s: Scenario, inputs: Inputs, out: torch.Tensor, lse: Optional[torch.Tensor],
               ref: Optional[RefOutputs] = None) -> CheckResult:
    """Every rule for an output this scenario's call produced on these inputs."""
    if ref is None:
        ref = reference_outputs(inputs)
    # the merged cascade carries the partials' roundings, which FA3's bound does not cover: vLLM's rules judge it
    res = check_output(out, ref.out, ref.naive, dtype_name=s.rule_dtype, softcap=s.softcap,
                       kvcache=s.entry == "kvcache", lse=lse if s.return_lse else None,
                       ref_lse=ref.lse if s.return_lse else None, fa3=s.entry != "cascade",
                       ref_unquantized=ref.unquantized, naive_lse=ref.naive_lse)
    _check_side_conditions(s, inputs, out, res)
    if s.entry == "cascade":
        _check_cascade(s, inputs, out, ref, res)
    return res


def _check_cascade(s: Scenario, inputs: Inputs, merged: torch.Tensor, ref: RefOutputs, res: CheckResult) -> None:
    """The merged cascade carries two extra roundings (each partial out is stored in the dtype before the merge),
    so it is held to vLLM's rules: 1e-2 against one plain call, 1.5e-2 + 1e-2|ref| against the reference. The
    plain call itself must pass every rule."""
    plain_out, _ = prepare_call(s, inputs, plain=True)()
    plain = check_output(plain_out, ref.out, ref.naive, dtype_name=s.rule_dtype, softcap=s.softcap,
                         ref_unquantized=ref.unquantized)
    reasons = [] if plain.correct else [f"plain call: {plain.reason}"]
    diff = (merged.float() - plain_out.float()).abs()
    over = diff > CASCADE_VS_PLAIN_TOL + CASCADE_VS_PLAIN_TOL * plain_out.float().abs()
    if over.any() or not torch.isfinite(merged.float()).all():
        reasons.append(f"cascade vs plain call: max diff {max_abs(merged, plain_out):.4g} "
                       f"({int(over.sum().item())} elements over {CASCADE_VS_PLAIN_TOL:g} "
                       f"+ {CASCADE_VS_PLAIN_TOL:g}|x|)")
    res.extra["plain_err"] = plain.err
    res.extra["cascade_vs_plain"] = max_abs(merged, plain_out)
    if reasons:
        res.correct = False
        res.reason = "; ".join(([res.reason] if res.reason else []) + reasons)


# --------------------------------------------------------------------------------------------------------------

@dataclass
class CheckedRun:
    """What check_scenario leaves for the evaluator: the inputs and output it checked."""
    result: CheckResult
    inputs: Optional[Inputs] = None
    out: Optional[torch.Tensor] = None
    lse: Optional[torch.Tensor] = None
    ref: Optional[RefOutputs] = None


def _is_not_supported(exc: BaseException) -> bool:
    return isinstance(exc, NotImplementedError) or "not supported" in str(exc).lower()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run_scenario(s: Scenario, device="cuda", seed: int = 0) -> CheckedRun:
    """Fresh inputs, one call, the reference, every rule. Never raises for a scenario that fails or cannot run:
    the result says why (an unsupported scenario is an error with unsupported=True, never silently passed)."""
    try:
        inputs = make_inputs(s, device, seed=seed)
    except Exception as exc:  # a grid or input-builder bug: report it against the scenario
        return CheckedRun(failed(f"building inputs failed: {_first_line(exc)}\n{traceback.format_exc(limit=3)}"))
    try:
        out, lse = call_flashseek(s, inputs)
        if inputs.device.type == "cuda":
            torch.cuda.synchronize(inputs.device)
    except Exception as exc:
        if s.unsupported_reason and _is_not_supported(exc):
            return CheckedRun(failed(f"unsupported: {s.unsupported_reason} (library: {_first_line(exc)})",
                                     unsupported=True), inputs)
        prefix = f"unsupported: {s.unsupported_reason}; " if s.unsupported_reason else ""
        return CheckedRun(failed(f"{prefix}the call raised {_first_line(exc)}", unsupported=False), inputs)
    try:
        ref = reference_outputs(inputs)
        res = check_call(s, inputs, out, lse, ref)
    except Exception as exc:
        return CheckedRun(failed(f"checking failed: {_first_line(exc)}\n{traceback.format_exc(limit=4)}"),
                          inputs, out, lse)
    if s.unsupported_reason:
        res.extra["note"] = f"marked unsupported in the grid ({s.unsupported_reason}) but the library ran it"
    return CheckedRun(res, inputs, out, lse, ref)


def check_scenario(s: Scenario, device="cuda", seed: int = 0) -> CheckResult:
    """inputs -> call -> reference -> tolerance for one scenario on fresh inputs from `seed`."""
    return run_scenario(s, device, seed).result
