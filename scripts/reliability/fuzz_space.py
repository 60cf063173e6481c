"""The fuzzer's configuration space: one random call of the operator per case seed, over every argument the
library supports (plain Python: no torch, so CI can check the space itself).

A case is a pure function of its seed: case i of a run with seed S has seed S + i, so
FLASHSEEK_FUZZ_SEED=<S + i> FLASHSEEK_FUZZ_CASES=1 replays exactly that case.

What varies: dtype (bf16, fp16); head dims (any multiple of 8 in [8, 256], and 192/128); GQA ratios and MQA;
KV layout (paged, varlen, batched rows with gaps), page sizes 1..256 including non-powers of two, NHD and HND
caches, pages repeated across sequences, block_table views wider than used, q / out views of padded rows;
causal, windows (one- and two-sided), softcap, softmax_scale, sinks (float32 and bf16 s_aux), num_splits 0 / 1 /
n with and without scheduler metadata, return_lse, out given or not; empty sequences, total_q = 0, total_k = 0;
and a few calls through flash_attn_with_kvcache (append, rotary, left padding, cache_batch_idx) and through the
cascade (two calls merged by merge_attn_states). Shapes stay small: a case costs well under 0.3 s on an H200.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List, Tuple

from flashseek.testing.grid import Scenario, custom_heads, make_scenario

PAGE_SIZES = (1, 2, 3, 4, 5, 7, 8, 12, 16, 16, 16, 16, 24, 32, 48, 64, 100, 128, 200, 256)
SPLITS_N = (2, 3, 4, 8, 16, 64, 128)
DEFAULT_CASES = 500


@dataclass(frozen=True)
class FuzzCase:
    case_seed: int
    scenario: Scenario
    sink_dtype: str = "fp32"  # dtype of s_aux when the scenario has sinks: "fp32" or "bf16"
    features: Tuple[str, ...] = ()

    @property
    def replay(self) -> str:
        return f"FLASHSEEK_FUZZ_SEED={self.case_seed} FLASHSEEK_FUZZ_CASES=1"


def _seqs(r: random.Random, kvcache: bool = False) -> List[Tuple[int, int]]:
    """(q_len, k_len) pairs: decodes, prefill chunks, or a mix; sometimes empty entries or an empty call."""
    if kvcache:
        q = r.choice([1, 1, 2, 4])
        return [(q, r.randint(q, 700)) for _ in range(r.randint(1, 6))]
    kind = r.choice(["decode", "decode", "prefill", "mixed", "mixed", "spec"])
    if kind == "decode":
        seqs = [(1, r.randint(1, 1200)) for _ in range(r.randint(1, 24))]
    elif kind == "spec":
        seqs = [(q, r.randint(q, 900)) for q in (r.randint(1, 8) for _ in range(r.randint(1, 12)))]
    elif kind == "prefill":
        seqs = [(q, q + (r.randint(0, 600) if r.random() < 0.5 else 0))
                for q in (r.randint(1, 300) for _ in range(r.randint(1, 3)))]
    else:
        seqs = [(q, q + r.randint(0, 500)) for q in (r.randint(2, 200) for _ in range(r.randint(1, 2)))]
        seqs += [(1, r.randint(1, 1000)) for _ in range(r.randint(1, 12))]
    u = r.random()
    if u < 0.04:  # total_q = 0
        seqs = [(0, k) for _, k in seqs]
    elif u < 0.08:  # total_k = 0
        seqs = [(q, 0) for q, _ in seqs]
    elif u < 0.25:  # zero-length entries among real ones (graph padding, finished sequences)
        seqs += [r.choice([(0, 0), (0, r.randint(1, 80)), (r.randint(1, 5), 0)]) for _ in range(r.randint(1, 3))]
    r.shuffle(seqs)
    return seqs


def fuzz_case(case_seed: int) -> FuzzCase:
    r = random.Random(f"flashseek-fuzz/{int(case_seed)}")
    feats: List[str] = []
    kw = dict(dtype="bf16" if r.random() < 0.65 else "fp16")
    feats.append(kw["dtype"])

    if r.random() < 0.1:
        d, dv = 192, 128
    else:
        d = 8 * r.randint(1, 32)
        dv = d
    hkv = r.choice([1, 1, 2, 4, 8])
    group = r.choice([g for g in (1, 2, 3, 4, 6, 8) if hkv * g <= 32])
    heads = custom_heads(hkv * group, hkv, d, dv)
    feats += [f"d{d}" + (f"-{dv}" if dv != d else ""), "mha" if group == 1 else ("mqa" if hkv == 1 else "gqa")]

    u = r.random()
    entry = "kvcache" if u < 0.08 else ("cascade" if u < 0.12 else "varlen")
    sink_dtype = "fp32"
    if entry == "kvcache":
        seqs = _seqs(r, kvcache=True)
        kw.update(entry="kvcache", out_given=False)
        feats.append("kvcache")
        if r.random() < 0.5:
            kw.update(kv_layout="batched", leftpad=r.random() < 0.5, cache_batch_idx=r.random() < 0.5,
                      kv_gap=r.randint(0, 40))
            feats += ["batched"] + [f for f in ("leftpad", "cache_batch_idx") if kw[f]]
        else:
            kw.update(kv_layout="paged", page_size=r.choice(PAGE_SIZES))
            feats.append("paged")
        if r.random() < 0.6:
            kw["append_new"] = True
            feats.append("append")
            if r.random() < 0.6:
                kw["rotary"] = r.choice(["interleaved", "neox"])
                kw["rotary_dim"] = r.choice([max(2, d // 2 // 2 * 2), d])
                feats.append(f"rotary-{kw['rotary']}")
    elif entry == "cascade":
        page = r.choice([8, 16, 32])
        prefix = page * r.randint(1, 4)
        seqs = [(q, prefix + r.randint(q, 400)) for q in (r.choice([1, 1, 2, 5, 17]) for _ in range(r.randint(1, 8)))]
        kw.update(entry="cascade", cascade_prefix=prefix, page_size=page, kv_layout="paged", causal=True,
                  return_lse=False)
        feats += ["cascade", "paged"]
    else:
        seqs = _seqs(r)
        u = r.random()
        layout = "paged" if u < 0.55 else ("varlen" if u < 0.8 else "batched")
        kw["kv_layout"] = layout
        feats.append(layout)
        if layout == "paged":
            kw["page_size"] = r.choice(PAGE_SIZES)
            if r.random() < 0.2:
                kw["hnd"] = True
                feats.append("hnd")
            if r.random() < 0.3:
                kw["block_table_pad"] = r.randint(1, 9)
                feats.append("bt_pad")
            if r.random() < 0.1:
                kw.update(block_table_repeats=True, num_blocks=r.randint(4, 64))
                feats.append("bt_repeats")
        elif layout == "batched":
            kw["kv_gap"] = r.randint(0, 40)
        if r.random() < 0.2:
            kw["q_row_pad"] = 8 * r.randint(1, 8)
            feats.append("q_row_pad")

    if "page_size" in kw:
        p = kw["page_size"]
        feats.append("page1" if p == 1 else ("page_pow2" if p & (p - 1) == 0 else "page_non_pow2"))
        if p == 256:
            feats.append("page256")

    if entry != "cascade":
        kw["causal"] = r.random() < 0.6
        if r.random() < 0.3:
            left = r.choice([-1, r.randint(0, 400)])
            right = 0 if kw["causal"] else r.choice([-1, r.randint(0, 400)])
            if (left, right) != (-1, -1):
                kw["window"] = (left, right)
                feats.append("window")
    if kw.get("causal", True):
        feats.append("causal")
    if r.random() < 0.2:
        kw["softcap"] = r.choice([2.0, 5.0, 30.0, 50.0])
        feats.append("softcap")
    if r.random() < 0.2:
        kw["softmax_scale"] = round(r.uniform(0.02, 0.3), 4)
        feats.append("scale")
    if entry != "cascade" and r.random() < 0.2:
        kw.update(sinks=True, sink_value=r.choice([None, None, 8.0, -8.0, 0.0]))
        sink_dtype = "bf16" if r.random() < 0.5 else "fp32"
        feats.append(f"sinks_{sink_dtype}")
    u = r.random()
    kw["num_splits"] = 0 if u < 0.45 else (1 if u < 0.7 else r.choice(SPLITS_N))
    feats.append({0: "splits0", 1: "splits1"}.get(kw["num_splits"], "splitsN"))
    if entry == "varlen" and r.random() < 0.3:
        kw["use_scheduler_metadata"] = True
        feats.append("metadata")
    if entry != "cascade" and r.random() < 0.5:
        kw["return_lse"] = True
        feats.append("lse")
    if entry != "kvcache":
        kw["out_given"] = r.random() < 0.5
        if kw["out_given"]:
            feats.append("out_given")

    qs, ks = [q for q, _ in seqs], [k for _, k in seqs]
    if sum(qs) == 0:
        feats.append("total_q0")
    if sum(ks) == 0:
        feats.append("total_k0")
    if any(q == 0 or k == 0 for q, k in seqs):
        feats.append("empty_seq")
    label = f"B{len(seqs)}-q{max(qs)}-k{max(ks)}"
    name = f"fuzz/{case_seed}/{heads.label}/{label}/" + "-".join(feats)
    return FuzzCase(case_seed=int(case_seed), scenario=make_scenario("fuzz", heads, seqs, name=name, **kw),
                    sink_dtype=sink_dtype, features=tuple(feats))


def fuzz_cases(seed: int, count: int = DEFAULT_CASES) -> List[FuzzCase]:
    return [fuzz_case(seed + i) for i in range(count)]
