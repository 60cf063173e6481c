"""Determinism and batch invariance.

1. The same inputs give bitwise the same out and LSE on 100 runs, with the split heuristic (num_splits=0), with
   no split (1) and with splits forced (n > 1: the split partials and the combine are in the path).
2. With num_splits=1 a sequence's output does not depend on the other sequences of the batch: the same sequence
   run alone and inside batches with different neighbours (other counts, lengths, position in the batch, a
   larger max_seqlen_q, its pages elsewhere in the cache) gives bitwise the same rows of out and LSE.
3. Nor on where its keys live: paged with pages of 16, 1, 48 and 256, varlen and batched rows give bitwise the
   same rows (the kernel walks keys in the same blocks whatever the layout).
"""

import os

import pytest

import flashseek

_REASON = flashseek.unavailable_reason()
if _REASON is not None:
    pytest.skip(f"flashseek kernels unavailable: {_REASON}", allow_module_level=True)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import prepare_call  # noqa: E402
from reliability_cases import DEVICE, bitwise_equal, pack_sequences, planned_splits, sync  # noqa: E402
from reliability_report import record  # noqa: E402

SEED = int(os.environ.get("FLASHSEEK_RELIABILITY_SEED", "1"))
RUNS = int(os.environ.get("FLASHSEEK_DETERMINISM_RUNS", "100"))
BATCHES = 12

# (scenario, forced split count)
REPEAT = [
    (make_scenario("decode-splitkv", custom_heads(8, 1, 128), "4q1s8000", name="det/decode-L70t8-8k",
                   return_lse=True), 16),
    (make_scenario("mixed", custom_heads(32, 8, 128), "q300s1000_16q1s2000", name="det/mixed-L8",
                   return_lse=True), 8),
    (make_scenario("prefill-varlen", custom_heads(8, 2, 64), "q700_q300", name="det/prefill-varlen-d64",
                   kv_layout="varlen", return_lse=True), 4),
    (make_scenario("sinks", custom_heads(8, 1, 64), "8q1s4000", name="det/sinks-w1024", sinks=True,
                   window=(1023, 0), return_lse=True), 8),
    (make_scenario("softcap", custom_heads(4, 2, 256), "2q1s3000_q100s500", name="det/softcap-d256-fp16",
                   dtype="fp16", softcap=30.0, return_lse=True), 8),
    (make_scenario("prefill-varlen", custom_heads(8, 8, 192, 128), "q200s600_2q1s900", name="det/d192-128-varlen",
                   kv_layout="varlen", return_lse=True), 4),
    (make_scenario("kvcache", custom_heads(8, 2, 128), "4q1s2000", name="det/kvcache-leftpad", entry="kvcache",
                   kv_layout="batched", leftpad=True, out_given=False, return_lse=True), 8),
]
REPEAT_CASES = [(s, mode) for s, forced in REPEAT for mode in (0, 1, forced)]


def _mode_name(mode):
    return {0: "heuristic", 1: "nosplit"}.get(mode, f"splits{mode}")


@pytest.mark.parametrize("scenario,splits", REPEAT_CASES,
                         ids=[f"{s.name}/{_mode_name(m)}" for s, m in REPEAT_CASES])
def test_repeated_runs_are_bitwise_equal(scenario, splits):
    s = scenario.with_(num_splits=splits)
    inputs = make_inputs(s, DEVICE, seed=SEED)
    call = prepare_call(s, inputs)
    out0, lse0 = call()
    out0, lse0 = out0.clone(), None if lse0 is None else lse0.clone()
    planned = planned_splits(inputs.kwargs) if s.entry == "varlen" else None
    bad = []
    for i in range(1, RUNS):
        if inputs.out is not None:
            inputs.out.fill_(float("nan"))  # every run must write every element again
        out, lse = call()
        if not bitwise_equal(out, out0) or (lse0 is not None and not bitwise_equal(lse, lse0)):
            diff = (out.float() - out0.float()).abs().nan_to_num(0.0).max().item()
            bad.append(f"run {i} (max |diff| {diff:.3g})")
    sync(DEVICE)
    record("determinism", kind="repeat", name=f"{s.name}/{_mode_name(splits)}", runs=RUNS, ok=not bad,
           mismatching_runs=len(bad), planned_splits=planned, reason="; ".join(bad[:3]) or None)
    assert not bad, f"{s.name} num_splits={splits} (seed {SEED}): {len(bad)} of {RUNS - 1} runs differ: {bad[:3]}"
    if splits > 1 and s.name == "det/decode-L70t8-8k":
        assert planned is None or planned > 1, f"num_splits={splits} but the library planned {planned} splits"


# ---- batch invariance ------------------------------------------------------------------------------------------

TARGETS = [
    dict(name="decode-L8", heads=(32, 8, 128), q=1, k=1500),
    dict(name="spec-L8", heads=(32, 8, 128), q=4, k=700),
    dict(name="prefill-chunk-L8", heads=(32, 8, 128), q=150, k=900),
    dict(name="sinks-w128-d64", heads=(8, 1, 64), q=1, k=2000, sinks=True, window=(127, 0)),
    # a windowed prefill of several tiles: with num_splits = 1 its key blocks start at key 0 whatever the batch's
    # tile height or the cache's boxes (key_origin.h window_origin_rows_of)
    dict(name="prefill-w128-d64", heads=(16, 2, 64), q=300, k=900, window=(127, 0)),
    dict(name="softcap-d256-fp16", heads=(4, 2, 256), q=20, k=600, softcap=50.0, dtype=torch.float16),
    dict(name="noncausal-d80", heads=(8, 2, 80), q=60, k=200, causal=False),
]


def _target(t, gen):
    hq, hkv, d = t["heads"]
    dt = t.get("dtype", torch.bfloat16)
    q = torch.randn(t["q"], hq, d, generator=gen, device=DEVICE).to(dt)
    k = torch.randn(t["k"], hkv, d, generator=gen, device=DEVICE).to(dt)
    v = torch.randn(t["k"], hkv, d, generator=gen, device=DEVICE).to(dt)
    call = dict(causal=t.get("causal", True), softcap=t.get("softcap", 0.0), window_size=t.get("window"),
                num_splits=1, return_softmax_lse=True)
    if t.get("sinks"):
        call["s_aux"] = torch.randn(hq, generator=gen, device=DEVICE)
    return q, k, v, call


def _run(qs, ks, vs, call, index, **layout):
    kw = pack_sequences(qs, ks, vs, **layout, **call)
    out, lse = flashseek.flash_attn_varlen_func(**kw)
    a = int(kw["cu_seqlens_q"][index])
    n = qs[index].shape[0]
    return out[a:a + n].clone(), lse[:, a:a + n].clone()


@pytest.mark.parametrize("target", TARGETS, ids=[t["name"] for t in TARGETS])
def test_sequence_output_does_not_depend_on_the_batch(target):
    gen = torch.Generator(device=DEVICE).manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    q, k, v, call = _target(target, gen)
    hq, hkv, d = target["heads"]
    group = hq // hkv
    tile = lambda max_q: 64 if max_q * group <= 64 else 128  # noqa: E731  (the library's query-block choice)
    alone = _run([q], [k], [v], call, 0, layout="paged", page_size=16, seed=0)
    bad = []
    for i in range(BATCHES):
        n_other = int(rng.integers(1, 31))
        pos = int(rng.integers(0, n_other + 1))
        qs, ks, vs = [], [], []
        for j in range(n_other):  # even batches: decode-like neighbours; odd ones: also a prefill chunk
            sq = int(rng.choice([1, 1, 1, 3])) if i % 2 == 0 or j else int(rng.integers(100, 300))
            sk = int(rng.integers(sq, 3000))
            qs.append(torch.randn(sq, hq, d, generator=gen, device=DEVICE).to(q.dtype))
            ks.append(torch.randn(sk, hkv, d, generator=gen, device=DEVICE).to(q.dtype))
            vs.append(torch.randn(sk, hkv, d, generator=gen, device=DEVICE).to(q.dtype))
        qs.insert(pos, q)
        ks.insert(pos, k)
        vs.insert(pos, v)
        out, lse = _run(qs, ks, vs, call, pos, layout="paged", page_size=16, seed=i + 1,
                        spare_pages=int(rng.integers(0, 50)))
        if not (bitwise_equal(out, alone[0]) and bitwise_equal(lse, alone[1])):
            diff = (out.float() - alone[0].float()).abs().nan_to_num(0.0).max().item()
            t0, t1 = tile(q.shape[0]), tile(max(x.shape[0] for x in qs))
            bad.append(f"batch {i} ({n_other} neighbours, position {pos}, query block {t0} rows alone, {t1} in "
                       f"the batch): max |diff| {diff:.3g}")
    sync(DEVICE)
    record("determinism", kind="invariance", name=target["name"], batches=BATCHES, mismatches=len(bad),
           ok=not bad, reason="; ".join(bad[:3]) or None)
    assert not bad, f"{target['name']} with num_splits=1 (seed {SEED}): {len(bad)} of {BATCHES} batches differ " \
                    f"from the sequence alone: {bad[:3]}"


LAYOUTS = [dict(layout="paged", page_size=1), dict(layout="paged", page_size=48), dict(layout="paged", page_size=256),
           dict(layout="varlen"), dict(layout="batched", kv_gap=37)]


@pytest.mark.parametrize("target", TARGETS, ids=[t["name"] for t in TARGETS])
def test_sequence_output_does_not_depend_on_the_kv_layout(target):
    gen = torch.Generator(device=DEVICE).manual_seed(SEED + 7)
    q, k, v, call = _target(target, gen)
    base = _run([q], [k], [v], call, 0, layout="paged", page_size=16, seed=3)
    bad = []
    for lay in LAYOUTS:
        out, lse = _run([q], [k], [v], call, 0, seed=5, **lay)
        if not (bitwise_equal(out, base[0]) and bitwise_equal(lse, base[1])):
            diff = (out.float() - base[0].float()).abs().nan_to_num(0.0).max().item()
            bad.append(f"{lay}: max |diff| {diff:.3g}")
    sync(DEVICE)
    record("determinism", kind="layout", name=target["name"], layouts=len(LAYOUTS), mismatches=len(bad),
           ok=not bad, reason="; ".join(bad[:3]) or None)
    assert not bad, f"{target['name']} (seed {SEED}): paged p16 vs other layouts differ: {bad}"
