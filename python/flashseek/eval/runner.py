"""One scenario of the evaluator: check on fresh random inputs, then time ours and every baseline on those same
inputs, then the roofline numbers. Returns one results.json record (results-schema.md fields plus extras)."""

from __future__ import annotations

import gc
import math
from typing import Dict, Optional, Sequence

import torch

from flashseek.eval import baselines as bl
from flashseek.eval import dense_twin, fp8_goals, targets
from flashseek.eval.roofline import roofline_fields
from flashseek.eval.stats import speedup
from flashseek.eval.timing import DeviceTimer, measure
from flashseek.testing.grid import Scenario
from flashseek.testing.run import prepare_call, run_scenario


def _num(x: Optional[float], digits: int = 4) -> Optional[float]:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(f"{x:.{digits}g}")


def _base_record(s: Scenario) -> dict:
    return {"name": s.name, "family": s.family, "correct": False, "err": None, "err_bound": None, "us": None,
            "us_spread": None, "host_us": None, "baselines": {}, "not_comparable": {}, "speedup": None,
            "roofline_frac": None, "timing_mode": s.timing, "heads": s.heads, "batch": s.batch,
            "dtype": s.dtype, "num_seqs": s.batch_size, "total_q": s.total_q, **targets.scenario_fields(s)}


def evaluate(s: Scenario, timer: DeviceTimer, ceilings: dict, baseline_names: Sequence[str],
             flex_names: Optional[set], seed: int, device: str = "cuda") -> dict:
    rec = _base_record(s)
    run = run_scenario(s, device, seed)
    res = run.result
    rec.update(correct=bool(res.correct), err=_num(res.err), err_bound=_num(res.err_bound))
    if res.lse_err is not None:
        rec["lse_err"] = _num(res.lse_err)
    if not res.correct:
        rec["reason"] = res.reason[:2000]
    if res.error:
        rec["error"] = res.error.splitlines()[0][:500]
        rec["unsupported"] = bool(res.unsupported)
        _free(run)
        return rec
    if res.extra.get("note"):
        rec["note"] = res.extra["note"]
    try:
        _time_ours(s, run, timer, rec)
    except Exception as exc:
        rec["timing_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        _sync(device)
    if rec["us"] is not None:
        _time_baselines(s, run, timer, rec, baseline_names, flex_names)
        sp = _num(speedup(rec["us"], rec["baselines"]))
        if rec["correct"]:  # a wrong result's speed means nothing: it stays out of the geomean
            rec["speedup"] = sp
        elif sp is not None:
            rec["speedup_withheld"] = sp
    rec.update({k: _num(v) if isinstance(v, float) else v
                for k, v in roofline_fields(s, rec["us"], ceilings["hbm_GBps"], ceilings["bf16_TFLOPs"]).items()})
    _free(run)
    if rec["us"] is not None and s.family == "fp8":
        _time_bf16_twin(s, timer, seed, device, rec)  # after ours and the baselines: its inputs in their place
    if rec["us"] is not None and targets.wants_page64_twin(s):
        _time_page64_twin(s, timer, seed, device, rec)
    if rec["us"] is not None and dense_twin.wants_dense_twin(s):
        _time_twin(dense_twin.dense_twin_of(s), timer, seed, device, rec, "dense_twin")  # a diagnostic (entry 60)
    return rec


_TRIVIAL = {}


def _trivial_op(device):
    """A one-element in-place add on `device` (one tensor per device, kept)."""
    key = str(device)
    if key not in _TRIVIAL:
        one = torch.zeros(1, device=device)
        _TRIVIAL[key] = lambda: one.add_(1)
    return _TRIVIAL[key]


def _time_ours(s: Scenario, run, timer: DeviceTimer, rec: dict) -> None:
    checked = run.out.clone()  # the output the check judged; the timed calls write the same buffer again
    fn = prepare_call(s, run.inputs)
    # The host's floor right beside the call's host loop (a one-element add, the same loop): the host target is a
    # ratio to it, and a run's own start-of-run value drifted from the decodes' (66f91d7: 6.44 us against calls
    # 1.5x slower than at 4d7bf2d on the same host path; docs/perf-log.md entry 24).
    floor = {}

    def host_floor():
        floor["us"] = timer.host_us(_trivial_op(run.out.device))

    host, t, last = measure(timer, fn, s.timing, between=host_floor)
    rec["host_us"] = _num(host)
    rec["trivial_op_host_us"] = _num(floor["us"])
    rec.update(us=_num(t.us), us_spread=_num(t.us_spread), us_min=_num(t.us_min), us_max=_num(t.us_max),
               repeats=t.repeats, timing_mode=t.mode)
    if t.note:
        rec["timing_note"] = t.note
    # is the output we timed the output we checked? (bitwise: same inputs, same schedule)
    out = last[0] if isinstance(last, tuple) else last
    if out is not None:
        same = out.shape == checked.shape and torch.equal(out.view(torch.int16), checked.view(torch.int16))
        rec["timed_output_matches_checked"] = bool(same)
        if not same and out.shape == checked.shape:
            rec["timed_output_max_diff"] = _num(float((out.float() - checked.float()).abs().max().item()))


def _time_twin(twin: Scenario, timer: DeviceTimer, seed: int, device: str, rec: dict, key: str) -> None:
    """A variant of the scenario checked and timed in this run after it (its inputs in their place): its time as
    rec[key + "_us"], or why not as rec[key + "_error"]."""
    run = run_scenario(twin, device, seed)
    try:
        if not run.result.correct:
            rec[key + "_error"] = (run.result.reason or run.result.error or "wrong")[:300]
            return
        twin_rec: dict = {}
        _time_ours(twin, run, timer, twin_rec)
        rec[key + "_us"] = twin_rec.get("us")
    except Exception as exc:
        rec[key + "_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        _sync(device)
    finally:
        _free(run)


def _time_bf16_twin(s: Scenario, timer: DeviceTimer, seed: int, device: str, rec: dict) -> None:
    """Issue #5's ratios: the same call with bf16 q, k and v (fp8_goals.py)."""
    rec["fp8_goal"] = fp8_goals.goal_of(s)
    _time_twin(fp8_goals.twin_of(s), timer, seed, device, rec, "bf16_twin")


def _time_page64_twin(s: Scenario, timer: DeviceTimer, seed: int, device: str, rec: dict) -> None:
    """Issue #6's page-size target: the same call on a cache of 64-token pages (targets.py)."""
    _time_twin(targets.page64_twin_of(s), timer, seed, device, rec, "p64_twin")


def _time_baselines(s: Scenario, run, timer: DeviceTimer, rec: dict, names: Sequence[str],
                    flex_names: Optional[set]) -> None:
    notes: Dict[str, str] = {}
    skipped: Dict[str, str] = {}
    dense = None
    for name in names:
        if name == "flex" and flex_names is not None and s.name not in flex_names:
            skipped[name] = "outside the FlexAttention subset (compile time per shape)"
            continue
        try:
            if dense is None:
                bl._common_checks(s, run.inputs)
                dense = bl.Dense(s, run.inputs)
            prep = bl.prepare(name, s, run.inputs, dense, run.ref.out)
            host, t, _ = measure(timer, prep.fn, s.timing)
            rec["baselines"][name] = _num(t.us)
            rec.setdefault("baseline_spread", {})[name] = _num(t.us_spread)
            rec.setdefault("baseline_host_us", {})[name] = _num(host)
            notes[name] = prep.note + (f"; {t.note}" if t.note else "")
        except bl.NotComparable as exc:
            rec["not_comparable"][name] = str(exc)
        except Exception as exc:  # a crashing baseline is recorded and the run goes on
            _sync(run.inputs.device.type)
            text = str(exc).strip().splitlines()
            rec.setdefault("baseline_errors", {})[name] = (f"crashed: {type(exc).__name__}"
                                                           + (f": {text[0][:200]}" if text else ""))
    if notes:
        rec["baseline_notes"] = notes
    if skipped:
        rec["baselines_skipped"] = skipped
    del dense


def _sync(device) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _free(run) -> None:
    run.inputs = run.out = run.lse = run.ref = None
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
