"""Garbage where the call must not look, and NaN where it must.

1. KV slots no sequence uses (the tail of a partly filled page, unused pages, the gap after a batched row, the
   slots before a left pad, slots an append will fill) holding NaN, +Inf, -Inf, 1e30 or -1e30 give bitwise the
   same out and LSE as zeros there (and a finite out). Pages of 1, 5, 48, 100, 128 and 256 slots, HND caches,
   splits, sinks, softcap, windows, fp16, d256, 192/128 and the kvcache entry.
2. Block-table entries past a sequence's pages holding -1, int32 min / max or num_blocks change nothing.
3. Padding around q: the padding of q's rows (a view of wider rows) and rows of q past the last sequence (graph
   padding) holding NaN / Inf change nothing in the rows the sequences own.
4. NaN in real inputs propagates as IEEE arithmetic in a naive softmax propagates it: NaN in one element of q
   or k makes every channel of exactly the rows whose logits hold it NaN (the poisoned query row; the rows that
   see the poisoned key), with their LSE NaN, and leaves every other element bitwise as it was; NaN in one
   element of v makes NaN at that channel for every row that sees the key, and nowhere outside that channel of
   the sequence's query heads of that KV head (0 * NaN in rows that share the key's block without seeing the
   key is the implementation's business). The expected pattern comes from the mask (flashseek.testing.reference's
   `visible`), not from the fp32 reference's output: its guard for rows that see no key (denominator > 0)
   also turns a row whose logits hold a NaN into 0 with LSE -inf.
"""

import os

import pytest

import flashseek

_REASON = flashseek.unavailable_reason()
if _REASON is not None:
    pytest.skip(f"flashseek kernels unavailable: {_REASON}", allow_module_level=True)

import torch  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.reference import visible  # noqa: E402
from flashseek.testing.run import call_flashseek  # noqa: E402
from reliability_cases import (DEVICE, INT32_MAX, INT32_MIN, bitwise_equal, set_unused_table_entries,  # noqa: E402
                               sync)
from reliability_report import record  # noqa: E402

SEED = int(os.environ.get("FLASHSEEK_RELIABILITY_SEED", "1"))
NAN, INF = float("nan"), float("inf")
_lse = dict(return_lse=True)
H8 = custom_heads(8, 2, 128)

GARBAGE_SCENARIOS = [
    make_scenario("edge", H8, "q100s1000_16q1s77_q1s1", name="garbage/p16", **_lse),
    make_scenario("edge", custom_heads(4, 2, 40), "8q1s70_q30s50", name="garbage/p1-d40", page_size=1, **_lse),
    make_scenario("edge", custom_heads(4, 1, 64), "q33s200_5q1s99", name="garbage/p5-d64", page_size=5, **_lse),
    make_scenario("edge", custom_heads(8, 2, 72), "q257s1000_4q1s600", name="garbage/p48-d72", page_size=48, **_lse),
    make_scenario("edge", H8, "q100s333_4q1s250", name="garbage/p100-hnd", page_size=100, hnd=True, **_lse),
    make_scenario("edge", H8, "32q1s1000", name="garbage/p128", page_size=128, **_lse),
    make_scenario("edge", H8, "q100s1000_16q1s77", name="garbage/p256", page_size=256, **_lse),
    make_scenario("edge", custom_heads(8, 1, 128), "4q1s9000_q1s17", name="garbage/p16-splits16-md", num_splits=16,
                  use_scheduler_metadata=True, **_lse),
    make_scenario("edge", custom_heads(8, 1, 64), "q100s1000_16q1s77", name="garbage/sinks-w128", sinks=True,
                  window=(127, 0), **_lse),
    make_scenario("edge", custom_heads(4, 2, 256), "q60s700_8q1s333", name="garbage/softcap-d256-fp16",
                  dtype="fp16", softcap=50.0, **_lse),
    make_scenario("edge", custom_heads(4, 4, 192, 128), "q50s500_4q1s130", name="garbage/d192-128-p32",
                  page_size=32, **_lse),
    make_scenario("edge", H8, "q257_q1k_q63", name="garbage/batched-gaps", kv_layout="batched", kv_gap=61, **_lse),
    make_scenario("edge", H8, "q30s40_q5s9", name="garbage/noncausal-bidir", causal=False, window=(7, 3),
                  page_size=16, **_lse),
    make_scenario("kvcache", H8, "4q1s700", name="garbage/kvcache-leftpad-batchidx", entry="kvcache",
                  kv_layout="batched", leftpad=True, cache_batch_idx=True, out_given=False, **_lse),
    make_scenario("kvcache", H8, "4q2s700", name="garbage/kvcache-p16-append-rotary", entry="kvcache",
                  append_new=True, rotary="neox", rotary_dim=128, out_given=False, **_lse),
]
FILLS = [NAN, INF, -INF, 1e30, -1e30]
FILL_IDS = ["nan", "inf", "-inf", "1e30", "-1e30"]


def _run(s, **kw):
    out, lse = call_flashseek(s, make_inputs(s, DEVICE, seed=SEED, **kw))
    sync(DEVICE)
    return out.clone(), None if lse is None else lse.clone()


@pytest.mark.parametrize("fill", FILLS, ids=FILL_IDS)
@pytest.mark.parametrize("scenario", GARBAGE_SCENARIOS, ids=[s.name for s in GARBAGE_SCENARIOS])
def test_unused_slots_change_nothing(scenario, fill):
    out0, lse0 = _run(scenario, fill_unused=0.0)
    out1, lse1 = _run(scenario, fill_unused=fill)
    reasons = []
    if not torch.isfinite(out1.float()).all():
        reasons.append(f"non-finite output with {fill} in unused slots")
    if not bitwise_equal(out0, out1):
        reasons.append(f"out differs from zeros in unused slots (max |diff| "
                       f"{(out0.float() - out1.float()).abs().nan_to_num(INF).max().item():.3g})")
    if lse0 is not None and not bitwise_equal(lse0, lse1):
        reasons.append("LSE differs from zeros in unused slots")
    record("unused_slots", kind="garbage", name=f"{scenario.name}/{fill}", ok=not reasons,
           reason="; ".join(reasons) or None)
    assert not reasons, f"{scenario.name} fill {fill} (seed {SEED}): {'; '.join(reasons)}"


TABLE_SCENARIOS = [s for s in GARBAGE_SCENARIOS if s.kv_layout == "paged" and s.entry == "varlen"]


@pytest.mark.parametrize("value", [-1, INT32_MIN, INT32_MAX, "num_blocks"])
@pytest.mark.parametrize("scenario", TABLE_SCENARIOS, ids=[s.name for s in TABLE_SCENARIOS])
def test_unused_block_table_entries_change_nothing(scenario, value):
    inputs = make_inputs(scenario, DEVICE, seed=SEED)
    out0, lse0 = call_flashseek(scenario, inputs)
    out0, lse0 = out0.clone(), lse0.clone()
    set_unused_table_entries(inputs.kwargs, inputs.kwargs["k"].shape[0] if value == "num_blocks" else value)
    out1, lse1 = call_flashseek(scenario, inputs)
    sync(DEVICE)
    ok = bitwise_equal(out0, out1) and bitwise_equal(lse0, lse1)
    record("unused_slots", kind="garbage", name=f"{scenario.name}/table-{value}", ok=ok,
           reason=None if ok else "garbage in unused block-table entries changed the output")
    assert ok, f"{scenario.name}: block-table entries past the sequences' pages = {value} changed the output"


@pytest.mark.parametrize("fill", [NAN, INF], ids=["nan", "inf"])
def test_q_padding_changes_nothing(fill):
    """q as a view of wider rows with garbage in the padding, plus garbage rows after the last sequence."""
    s = make_scenario("edge", H8, "q40s300_6q1s200", name="garbage/q-padding", q_row_pad=24, block_table_pad=3,
                      out_given=False, **_lse)
    results = []
    for value in (0.0, fill):
        inputs = make_inputs(s, DEVICE, seed=SEED)
        kw = dict(inputs.kwargs)
        q = kw["q"]
        q._base[:, q.shape[1] * q.shape[2]:] = value  # the padding of each row
        total, extra = q.shape[0], 9
        wide = torch.full((total + extra, q.shape[1] * q.shape[2] + 24), value, dtype=q.dtype, device=DEVICE)
        wide[:total] = q._base
        kw["q"] = wide[:, :q.shape[1] * q.shape[2]].unflatten(1, (q.shape[1], q.shape[2]))
        out, lse = flashseek.flash_attn_varlen_func(**kw)
        results.append((out[:total].clone(), lse[:, :total].clone()))
    sync(DEVICE)
    ok = bitwise_equal(results[0][0], results[1][0]) and bitwise_equal(results[0][1], results[1][1])
    record("unused_slots", kind="garbage", name=f"q-padding/{fill}", ok=ok,
           reason=None if ok else "garbage in q's row padding or trailing rows changed the output")
    assert ok, f"{fill} in q's row padding / rows past the last sequence changed the sequences' output"


# ---- NaN in real inputs ----------------------------------------------------------------------------------------

NAN_SCENARIOS = [
    # (scenario, sequence, position of the poisoned query token / key, head (KV head for k and v), channel)
    (make_scenario("edge", H8, "q40s100_q1s50_q7s7", name="nan/varlen-causal", kv_layout="varlen", **_lse),
     0, 70, 1, 5),
    (make_scenario("edge", H8, "q40s300_4q1s250", name="nan/p16-w32", page_size=16, window=(31, 0), **_lse),
     0, 280, 0, 17),
    (make_scenario("edge", custom_heads(8, 1, 128), "4q1s3000", name="nan/p16-splits8", num_splits=8, **_lse),
     1, 1234, 0, 100),
    (make_scenario("edge", custom_heads(8, 1, 64), "q30s200_2q1s90", name="nan/sinks-softcap-p48", page_size=48,
                   sinks=True, softcap=30.0, **_lse), 0, 185, 0, 63),
    (make_scenario("edge", custom_heads(4, 2, 80), "q25s60", name="nan/noncausal-bidir", kv_layout="varlen",
                   causal=False, window=(9, 4), **_lse), 0, 30, 1, 0),
]
NAN_CASES = [(sc, target) for sc in NAN_SCENARIOS for target in ("q", "k", "v")]


def _poison(inputs, target, seq, pos, head, chan):
    """One NaN in the real data of sequence `seq`, in the call's tensors and in what the reference reads."""
    s, kw = inputs.scenario, inputs.kwargs
    if target == "q":
        qpos = min(pos, inputs.q_lens[seq] - 1)
        kw["q"][inputs.cu_seqlens_q[seq] + qpos, head * (s.num_heads_q // s.num_heads_kv), chan] = NAN
        return
    kpos = min(pos, inputs.k_lens[seq] - 1)
    t = kw[target]
    if s.kv_layout == "varlen":  # the reference's per-sequence tensors are views of k / v
        t[int(kw["cu_seqlens_k"][seq]) + kpos, head, chan] = NAN
    else:
        page = s.page_size
        pid = int(kw["block_table"][seq, kpos // page])
        t[pid, kpos % page, head, chan] = NAN
        (inputs._seq_k if target == "k" else inputs._seq_v)[seq][kpos, head, chan] = NAN


def _sees(inputs, seq, key):
    """Bool (Sq,): the query tokens of `seq` that see key position `key`."""
    s = inputs.scenario
    sq, sk = inputs.q_lens[seq], inputs.k_lens[seq]
    rows = torch.arange(sq, device=DEVICE)
    return visible(rows, torch.tensor([key], device=DEVICE), sq, sk, s.causal, s.window)[:, 0]


def _expected_nan(inputs, target, seq, pos, head, chan):
    """(allowed, required) bool masks over out (T, Hq, dv) of where a NaN may / must show, as IEEE arithmetic in
    a naive softmax puts it. q or k: every channel of every row whose logits hold the NaN (the poisoned query
    row, if it sees any key; the rows that see the poisoned key), nothing else. v: the poisoned channel of the
    rows that see the key must be NaN; the same channel of the sequence's other rows of those heads may be
    (0 * NaN where a row shares the key's block without seeing the key)."""
    s = inputs.scenario
    a, b = inputs.cu_seqlens_q[seq], inputs.cu_seqlens_q[seq + 1]
    group = s.num_heads_q // s.num_heads_kv
    heads = slice(head * group, (head + 1) * group)
    shape = (sum(inputs.q_lens), s.num_heads_q, s.head_dim_v)
    required = torch.zeros(shape, dtype=torch.bool, device=DEVICE)
    allowed = torch.zeros_like(required)
    if target == "q":
        t = min(pos, inputs.q_lens[seq] - 1)
        sk, sq = inputs.k_lens[seq], inputs.q_lens[seq]
        rows = torch.tensor([t], device=DEVICE)
        if sk and bool(visible(rows, torch.arange(sk, device=DEVICE), sq, sk, s.causal, s.window).any()):
            required[a + t, head * group, :] = True
        allowed = required.clone()
    else:
        sees = _sees(inputs, seq, min(pos, inputs.k_lens[seq] - 1))
        if target == "k":
            required[a:b, heads, :] = sees[:, None, None]
            allowed = required.clone()
        else:
            required[a:b, heads, chan] = sees[:, None]
            allowed[a:b, heads, chan] = True
    return allowed, required


def _nan_run(case, target):
    s, seq, pos, head, chan = case
    out_clean, lse_clean = _run(s)
    inputs = make_inputs(s, DEVICE, seed=SEED)
    _poison(inputs, target, seq, pos, head, chan)
    out, lse = call_flashseek(s, inputs)
    sync(DEVICE)
    allowed, required = _expected_nan(inputs, target, seq, pos, head, chan)
    return out, lse, out_clean, lse_clean, allowed, required


@pytest.mark.parametrize("case,target", NAN_CASES, ids=[f"{c[0].name}/{t}" for c, t in NAN_CASES])
def test_nan_in_real_inputs_propagates_to_the_rows_it_reaches(case, target):
    s = case[0]
    out, lse, out_clean, lse_clean, allowed, required = _nan_run(case, target)
    nan_out = torch.isnan(out.float())
    reasons = []
    if not required.any():
        reasons.append("test setup: the poisoned element reaches no row")
    if (required & ~nan_out).any():
        reasons.append(f"{int((required & ~nan_out).sum())} elements the NaN reaches are not NaN (first at "
                       f"{tuple((required & ~nan_out).nonzero()[0].tolist())}: {out[required & ~nan_out][0].item()})")
    if (nan_out & ~allowed).any():
        reasons.append(f"{int((nan_out & ~allowed).sum())} elements the NaN cannot reach are NaN (first at "
                       f"{tuple((nan_out & ~allowed).nonzero()[0].tolist())})")
    if not bitwise_equal(out[~allowed], out_clean[~allowed]):
        reasons.append("elements the NaN cannot reach differ from the clean run")
    if target == "v" and not bitwise_equal(lse, lse_clean):
        reasons.append("a NaN in v changed the LSE")
    record("unused_slots", kind="nan", name=f"{s.name}/{target}/out", ok=not reasons,
           reason="; ".join(reasons) or None)
    assert not reasons, f"{s.name} NaN in {target} (seed {SEED}): {'; '.join(reasons)}"


QK_CASES = [(c, t) for c, t in NAN_CASES if t != "v"]


@pytest.mark.parametrize("case,target", QK_CASES, ids=[f"{c[0].name}/{t}" for c, t in QK_CASES])
def test_nan_in_q_or_k_makes_those_rows_lse_nan(case, target):
    """A row whose output is NaN must not report a finite or -inf LSE: merge_attn_states (and any LSE-weighted
    combine) would then drop the partial or weight it as if it were clean."""
    s = case[0]
    out, lse, out_clean, lse_clean, allowed, required = _nan_run(case, target)
    rows = required.any(dim=-1).t()  # (Hq, T): the rows the NaN reaches
    nan_lse = torch.isnan(lse)
    reasons = []
    if (rows & ~nan_lse).any():
        first = tuple((rows & ~nan_lse).nonzero()[0].tolist())
        reasons.append(f"{int((rows & ~nan_lse).sum())} rows with NaN output have a non-NaN LSE (first (head, "
                       f"token) {first}: {lse[first].item()})")
    if (nan_lse & ~rows).any() or not bitwise_equal(lse[~rows], lse_clean[~rows]):
        reasons.append("the LSE of rows the NaN cannot reach changed")
    record("unused_slots", kind="nan", name=f"{s.name}/{target}/lse", ok=not reasons,
           reason="; ".join(reasons) or None)
    assert not reasons, f"{s.name} NaN in {target} (seed {SEED}): {'; '.join(reasons)}"
