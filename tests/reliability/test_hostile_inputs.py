"""Hostile device data: block_table entries outside [0, num_blocks) (negative, one past, int32 extremes, random),
seqused_k past the pages a sequence's row holds (or past a batched cache row, or negative), cu_seqlens_q and
cu_seqlens_k decreasing or past the tensors, all at once, with and without splits; and for
flash_attn_with_kvcache, whose append writes into the cache, bad cache_seqlens, page_table, cache_batch_idx
and cache_leftpad (scripts/reliability/reliability_cases.py lists them).

The library reads no device data on the host, so none of this can be rejected up front; the kernels clamp what
they read. Each case must therefore: finish without a CUDA error (sync(DEVICE) raises none), write
nothing outside `out` (a view inside a NaN-poisoned buffer with guard regions before, after and between its
rows; for the kvcache entry the caches sit in such buffers), write none of its inputs, and leave the device able
to run a following normal call that passes the reference check. The values it computes are not judged: the
contract is broken. The opt-in checker flashseek.check_inputs must name the bad argument of every case.

What a write past out/lse that misses the guards, or an out-of-range read, would still escape here is what
run_sanitizers.sh's memcheck pass (which runs these cases too) is for.
"""

import os

import pytest

import flashseek

_REASON = flashseek.unavailable_reason()
if _REASON is not None:
    pytest.skip(f"flashseek kernels unavailable: {_REASON}", allow_module_level=True)

from flashseek.check_inputs import check_inputs  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import run_scenario  # noqa: E402
from reliability_cases import (BASES, DEVICE, FOLLOWUP, HOSTILE_CASES, INT32_MAX, INT32_MIN,  # noqa: E402
                               build_hostile, run_checker, run_hostile, set_unused_table_entries, sync)
from reliability_report import record  # noqa: E402

SEED = int(os.environ.get("FLASHSEEK_RELIABILITY_SEED", "1"))
_lost = []  # the case after which the CUDA context is unusable: later cases fail fast, naming it


@pytest.mark.parametrize("case", HOSTILE_CASES, ids=[c.name for c in HOSTILE_CASES])
def test_hostile_call_is_contained(case):
    if _lost:
        pytest.fail(f"not run: the CUDA context was lost in {_lost[0]}")
    hc = build_hostile(case, DEVICE, seed=SEED)
    res = run_hostile(hc, DEVICE)
    if res["crashed"]:
        _lost.append(case.name)
    else:
        follow = run_scenario(FOLLOWUP, DEVICE, seed=SEED).result
        res["followup_ok"] = follow.correct
        if not follow.correct:
            res["ok"] = False
            res["reason"] = "; ".join(x for x in (res.get("reason"), f"following normal call: {follow.summary()}")
                                      if x)
    record("hostile", **res)
    assert res["ok"], f"{case.name} (base {case.base}, seed {SEED}): {res.get('reason')}"


@pytest.mark.parametrize("case", [c for c in HOSTILE_CASES if c.arg], ids=[c.name for c in HOSTILE_CASES if c.arg])
def test_checker_names_the_bad_argument(case):
    if _lost:
        pytest.fail(f"not run: the CUDA context was lost in {_lost[0]}")
    arg, message = run_checker(build_hostile(case, DEVICE, seed=SEED))
    record("hostile", kind="checker", name=case.name, ok=arg == case.arg, expected=case.arg, got=arg,
           reason=None if arg == case.arg else message)
    assert arg == case.arg, f"{case.name}: check_inputs named {arg!r}, expected {case.arg!r}: {message}"


@pytest.mark.parametrize("unused", [-1, INT32_MIN, INT32_MAX], ids=["neg1", "int-min", "int-max"])
@pytest.mark.parametrize("base", [b for b, s in BASES.items() if s.entry == "varlen"])
def test_checker_accepts_valid_calls(base, unused):
    """Valid device data passes, also with garbage in the block-table entries no sequence uses."""
    kw = make_inputs(BASES[base], DEVICE, seed=SEED).kwargs
    check_inputs(**kw)
    if kw.get("block_table") is not None:
        set_unused_table_entries(kw, unused)
        check_inputs(**kw)
    sync(DEVICE)
