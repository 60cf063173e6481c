#!/usr/bin/env python3
"""A small program for compute-sanitizer: one small call per family of grid.md and per kernel variant.

Variants: every forward kernel (tiles of head dims 64, 128, 192/128, 192, 256, reached from d 40, 64, 72, 80, 96,
128, 160, 192, 256; bf16 and fp16; 64- and 128-row query blocks), each tile without and with splits (the
combine kernel) at both block sizes. Families: prefill (varlen,
batched rows with gaps), decode, split-KV with scheduler metadata, speculative decode, mixed, sliding window,
softcap, sinks (float32 and bf16 s_aux, with and without splits), flash_attn_with_kvcache (append, rotary, left
padding, cache_batch_idx, pages of 4), the cascade (merge_attn_states), merge_attn_states on its own (fp32 and
+inf LSEs), and the edge cases (zero-length sequences, total_k = 0, page 1, page 48, HND, strided q / out /
block_table views, Sq > Sk); the fp8-cache kernels (e4m3 q/k/v and a bf16 q against an e4m3 cache, every tile,
both block sizes, with and without splits); the persistent d64 192-row kernels, e4m3 and bf16 (one call each of
250 windowed tiles: the persistent kernels take only grids of 1.5 waves). MLA decode is rejected by the library today: not called. With --hostile,
also the hostile device data of reliability_cases (memcheck is where those matter).

Shapes are tiny (a few CTAs, a few KV blocks, enough to wrap every K/V stage ring) so that racecheck and
initcheck finish in about two minutes. Each scenario is announced on stdout ("RELIABILITY-SCENARIO <label>")
and synchronized, so a sanitizer report lands right after the scenario that caused it; the last line is
"RELIABILITY-WORKLOAD scenarios=N calls=N failed=N skipped=N".

    python3 scripts/reliability/sanitizer_workload.py --list          # the plan (no torch, no GPU)
    python3 scripts/reliability/sanitizer_workload.py --check         # run and check every output (no sanitizer)
    compute-sanitizer --tool memcheck python3 scripts/reliability/sanitizer_workload.py --hostile all
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _p in (os.path.join(_ROOT, "python"), os.path.dirname(os.path.abspath(__file__))):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from flashseek.testing.grid import Scenario, custom_heads, make_scenario  # noqa: E402
from reliability_report import SCENARIO_MARK, WORKLOAD_MARK  # noqa: E402

# Padded tiles and the head dims that reach them (d = dv except 192/128).
TILES: Dict[str, Tuple[Tuple[int, int], ...]] = {
    "64": ((40, 40), (64, 64)),
    "128": ((72, 72), (80, 80), (96, 96), (128, 128)),
    "192x128": ((192, 128),),
    "192": ((160, 160), (192, 192)),
    "256": ((256, 256),),
}
GRID_FAMILIES = ("prefill-dense", "prefill-varlen", "decode-paged", "decode-splitkv", "spec-decode", "mixed",
                 "sliding-window", "softcap", "sinks", "kvcache", "lse", "edge")
NOT_CALLED = {}


@dataclass
class Item:
    label: str
    kind: str  # "scenario" | "merge" | "hostile"
    family: str
    scenario: Optional[Scenario] = None
    tweak: str = ""  # "sinks_bf16": s_aux passed as bf16
    hostile: str = ""  # a reliability_cases.HOSTILE_CASES name
    quick: bool = True  # part of --quick
    extra: Dict[str, Any] = field(default_factory=dict)


# One call per forward-kernel instantiation (dtype x tile x block_m: 64 query rows when every sequence's
# packed rows fit, else 128), each tile seeing both epilogues (split partials and direct) at both block sizes.
VARIANT_CALLS = (  # (dtype, block_m, split, batch): packed rows = max q_len x 2 (GQA 4/2)
    ("bf16", 128, False, "q37s600_q1s129"),
    ("bf16", 64, True, "q1s700_q3s400"),
    ("fp16", 64, False, "q20s600_q1s129"),
    ("fp16", 128, True, "q40s1500_q2s300"),
)


def variant_items() -> List[Item]:
    items = []
    for tile, dims in TILES.items():
        for i, (dtype, block_m, split, batch) in enumerate(VARIANT_CALLS):
            d, dv = dims[(i + i // len(dims)) % len(dims)]  # each dim meets both split modes
            h = custom_heads(4, 2, d, dv)
            label = f"variant/{dtype}/tile{tile}/d{d}" + (f"-{dv}" if dv != d else "") + \
                    f"/m{block_m}/" + ("split" if split else "nosplit")
            if split:  # few CTAs: the heuristic splits (3 asked), the combine runs
                s = make_scenario("decode-splitkv", h, batch, name=label, dtype=dtype, page_size=16, num_splits=3,
                                  return_lse=True)
            else:  # K/V stage rings wrap; one sequence shorter than a block
                s = make_scenario("prefill-varlen", h, batch, name=label, dtype=dtype, kv_layout="varlen",
                                  num_splits=1, return_lse=True)
            items.append(Item(label, "scenario", "variant", s))
    return items


# The fp8-cache kernels (compute fp16: e4m3 q, fp16 q; compute bf16: bf16 q), every tile at both block sizes.
FP8_VARIANT_CALLS = (  # (q dtype, kv dtype, block_m, split, batch)
    ("e4m3", None, 128, False, "q37s600_q1s129"),
    ("e4m3", None, 64, True, "q1s700_q3s400"),
    ("bf16", "e4m3", 64, False, "q20s600_q1s129"),
    ("bf16", "e4m3", 128, True, "q40s1500_q2s300"),
)


def fp8_variant_items() -> List[Item]:
    items = []
    for tile, dims in TILES.items():
        for i, (dtype, kv_dtype, block_m, split, batch) in enumerate(FP8_VARIANT_CALLS):
            d, dv = dims[(i + i // len(dims)) % len(dims)]
            h = custom_heads(4, 2, d, dv)
            label = f"variant-fp8/{dtype}" + (f"-{kv_dtype}kv" if kv_dtype else "") + f"/tile{tile}/d{d}" + \
                    (f"-{dv}" if dv != d else "") + f"/m{block_m}/" + ("split" if split else "nosplit")
            kw = dict(name=label, dtype=dtype, kv_dtype=kv_dtype, descale="random", return_lse=True)
            if split:
                s = make_scenario("fp8", h, batch, page_size=16, num_splits=3, **kw)
            else:
                s = make_scenario("fp8", h, batch, kv_layout="varlen", num_splits=1, **kw)
            items.append(Item(label, "scenario", "variant-fp8", s))
    # The persistent kernels take a call only from 1.5 waves of tiles (launch.h persistent_takes), which no tiny
    # shape reaches: one call each that does, with short windowed tiles so that the sanitizers finish. 375 tiles of
    # 192 rows (group 8, 2 KV heads; 2.8 waves, past the planner's two for the bf16 192-row persistent kernel): the
    # native e4m3 d64 tile's persistent kernel (entry 99) and the bf16 one.
    h64 = custom_heads(16, 2, 64)
    for dtype in ("e4m3", "bf16"):
        label = f"variant-persistent/{dtype}/d64/m192/w128"
        kw = dict(descale="random") if dtype == "e4m3" else {}
        s = make_scenario("fp8" if dtype == "e4m3" else "sliding-window", h64, "q4500", name=label, dtype=dtype,
                          page_size=16, window=(127, 0), return_lse=True, **kw)
        items.append(Item(label, "scenario", "variant-persistent", s))
    return items


def _f(family: str, heads, batch: str, tag: str, quick: bool = True, tweak: str = "", **kw) -> Item:
    label = f"family/{family}/{tag}"
    return Item(label, "scenario", family, make_scenario(family, heads, batch, name=label, **kw), tweak=tweak,
                quick=quick)


def family_items() -> List[Item]:
    h128, h64 = custom_heads(8, 2, 128), custom_heads(8, 1, 64)
    mla = custom_heads(16, 1, 64, 512)  # MLA decode: q 64 + q_v 512, one KV head
    kvc = dict(entry="kvcache", out_given=False)
    return [
        _f("prefill-dense", h128, "2q150", "varlen-causal", kv_layout="varlen"),
        _f("prefill-varlen", custom_heads(4, 4, 72), "q100_q37", "noncausal-bidir-window", kv_layout="varlen",
           causal=False, window=(31, 31)),
        _f("prefill-varlen", h128, "q50_q20", "batched-gaps", kv_layout="batched", kv_gap=13),
        _f("decode-paged", custom_heads(8, 1, 128), "8q1s300", "p16"),
        _f("decode-splitkv", custom_heads(8, 1, 128), "2q1s1500", "splits0-md", use_scheduler_metadata=True),
        _f("decode-splitkv", custom_heads(8, 1, 128), "2q1s1500", "splits16-md", num_splits=16,
           use_scheduler_metadata=True, return_lse=True),
        _f("spec-decode", h128, "4q4s300", "p16"),
        _f("mixed", h128, "q60s300_6q1s200", "p16", return_lse=True),
        _f("sliding-window", h64, "q100s400_4q1s500", "w64-splits4", window=(63, 0), num_splits=4),
        _f("softcap", custom_heads(4, 2, 256), "q40s200_2q1s300", "sc50", softcap=50.0),
        _f("softcap", h128, "q40s200_2q1s300", "sc30-w100", softcap=30.0, window=(99, 0)),
        _f("sinks", h64, "q50s200_4q1s700", "fp32-nosplit", sinks=True, num_splits=1, return_lse=True),
        _f("sinks", h64, "4q1s700", "bf16-splits8-w128", sinks=True, num_splits=8, window=(127, 0),
           tweak="sinks_bf16", return_lse=True),
        _f("kvcache", custom_heads(4, 2, 64), "3q1s150", "batched-leftpad-batchidx", kv_layout="batched",
           leftpad=True, cache_batch_idx=True, return_lse=True, **kvc),
        _f("kvcache", custom_heads(4, 2, 128), "3q2s200", "batched-append-rotary-interleaved", kv_layout="batched",
           append_new=True, rotary="interleaved", rotary_dim=64, **kvc),
        _f("kvcache", custom_heads(4, 2, 128), "2q1s100", "p4-append-rotary-neox", page_size=4, append_new=True,
           rotary="neox", rotary_dim=128, causal=False, **kvc),
        _f("lse", h128, "q3s100_q1s80_q5s64", "cascade-p32", entry="cascade", cascade_prefix=32, page_size=16),
        _f("lse", custom_heads(4, 4, 64), "q3s100_q1s80", "cascade-fp16-sc50", entry="cascade", cascade_prefix=16,
           page_size=8, dtype="fp16", softcap=50.0, out_given=False),
        Item("family/lse/merge-fp32-inf-lse", "merge", "lse"),
        _f("mla", mla, "q5s300_2q1s200", "decode-p64", q_v=True, page_size=64, return_lse=True),
        _f("mla", mla, "2q1s700", "decode-splits3", q_v=True, page_size=64, num_splits=3, return_lse=True),
        _f("mla", mla, "2q3s500", "decode-cp4-r2", q_v=True, page_size=64, cp_world_size=4, cp_rank=2),
        _f("edge", h128, "q1s100_q0s0_q0s37_q3s0_q1s1_q17s17", "zero-lengths", return_lse=True),
        _f("edge", h128, "4q1s0", "total-k0", return_lse=True),
        _f("edge", custom_heads(4, 2, 40), "8q1s70_q30s50", "page1", page_size=1),
        _f("edge", custom_heads(4, 2, 72), "q40s300_2q1s100", "page48", page_size=48),
        _f("edge", h128, "q20s200_4q1s333", "hnd", hnd=True),
        _f("edge", h128, "q20s200_4q1s150", "q-out-bt-strides", q_row_pad=16, block_table_pad=5),
        _f("edge", h128, "q100s20_q9s3", "sq-gt-sk", return_lse=True),
        _f("edge", custom_heads(8, 1, 128), "993q1s4", "over-992", quick=False),
    ]


def hostile_items(which: str) -> List[Item]:
    if which == "none":
        return []
    from reliability_cases import HOSTILE_CASES  # needs torch
    cases = HOSTILE_CASES if which == "all" else [c for c in HOSTILE_CASES if c.name.split("/")[0] in
                                                 ("paged", "varlen", "kvcache-paged")][::3]
    return [Item(f"hostile/{c.name}", "hostile", "hostile", hostile=c.name) for c in cases]


def plan(quick: bool = False, hostile: str = "none", only: Optional[str] = None) -> List[Item]:
    items = variant_items() + fp8_variant_items() + family_items() + hostile_items(hostile)
    if quick:
        items = [it for it in items if it.quick]
    if only:
        items = [it for it in items if re.search(only, it.label)]
    return items


# ---- running ------------------------------------------------------------------------------------------------------

def _sync(device) -> None:
    import torch
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def _run_merge(device, check: bool) -> int:
    import torch

    import flashseek
    from flashseek.testing.reference import merge_ref
    gen = torch.Generator(device=device).manual_seed(5)
    t, h, d = 37, 4, 72
    outs = [torch.randn(t, h, d, generator=gen, device=device) for _ in range(2)]
    lses = [torch.randn(h, t, generator=gen, device=device) * 3 for _ in range(2)]
    lses[0][0, :5] = float("inf")  # FA3's empty partial: counts as -inf
    lses[1][1, :3] = float("-inf")
    dst, dst_lse = torch.empty(t, h, d, device=device), torch.empty(h, t, device=device)
    flashseek.merge_attn_states(dst, outs[0], lses[0], outs[1], lses[1], dst_lse)
    _sync(device)
    if check:
        ref, ref_lse = merge_ref(outs[0], lses[0], outs[1], lses[1])
        err = (dst - ref).abs().max().item()
        if not err <= 1e-5:
            raise AssertionError(f"merge_attn_states fp32: max err {err:.3g}")
    return 1


def _run_scenario(item: Item, device, check: bool) -> int:
    import torch

    from flashseek.testing.inputs import make_inputs
    from flashseek.testing.run import check_call, prepare_call
    s = item.scenario
    inputs = make_inputs(s, device, seed=11)
    if item.tweak == "sinks_bf16":
        inputs.kwargs["s_aux"] = inputs.kwargs["s_aux"].to(torch.bfloat16)
        inputs.s_aux = inputs.kwargs["s_aux"].float()
    out, lse = prepare_call(s, inputs)()
    _sync(device)
    if check:
        res = check_call(s, inputs, out, lse)
        if not res.correct:
            raise AssertionError(res.summary())
    calls = {"cascade": 3, "kvcache": 2 if (s.append_new or s.rotary) else 1}.get(s.entry, 1)
    return calls + (1 if s.use_scheduler_metadata else 0)


def _run_hostile(item: Item, device, check: bool) -> int:
    from reliability_cases import HOSTILE_CASES, build_hostile, run_hostile
    case = next(c for c in HOSTILE_CASES if c.name == item.hostile)
    hc = build_hostile(case, device, seed=3)
    res = run_hostile(hc, device)
    _sync(device)
    if not res.get("ok"):
        raise AssertionError(res.get("reason", "hostile call failed"))
    return 1 + (1 if hc.metadata_kwargs is not None else 0)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="one small flashseek call per family and kernel variant")
    ap.add_argument("--list", action="store_true", help="print the plan and exit (no torch needed)")
    ap.add_argument("--check", action="store_true", help="also check every output against the reference "
                    "(do not use under a sanitizer: the reference is slow there and its torch kernels add noise)")
    ap.add_argument("--quick", action="store_true", help="skip the larger scenarios")
    ap.add_argument("--hostile", choices=("none", "some", "all"), default="none",
                    help="also run hostile device data (reliability_cases.HOSTILE_CASES)")
    ap.add_argument("--only", default=None, help="regex on the labels")
    args = ap.parse_args(argv)

    if args.list:
        items = plan(args.quick, "none", args.only)
        for it in items:
            print(f"{it.kind:<9} {it.label}")
        print(f"{len(items)} items (+ hostile cases with --hostile some/all); not called: "
              + "; ".join(f"{k}: {v}" for k, v in NOT_CALLED.items()))
        return 0

    import torch

    import flashseek
    reason = flashseek.unavailable_reason()
    if reason is not None:
        print(f"flashseek kernels unavailable: {reason}")
        print(f"{WORKLOAD_MARK} scenarios=0 calls=0 failed=0 skipped=1")
        return 2
    device = torch.device(os.environ.get("FLASHSEEK_RELIABILITY_DEVICE", "cuda"))  # "cpu": dry runs only
    items = plan(args.quick, args.hostile, args.only)
    failed = calls = done = 0
    context_lost = False
    t0 = time.time()
    for it in items:
        print(f"{SCENARIO_MARK} {it.label}", flush=True)
        if context_lost:
            print("  SKIPPED (the CUDA context was lost earlier)", flush=True)
            failed += 1
            continue
        t1 = time.time()
        try:
            if it.kind == "merge":
                calls += _run_merge(device, args.check)
            elif it.kind == "hostile":
                calls += _run_hostile(it, device, args.check)
            else:
                calls += _run_scenario(it, device, args.check)
            done += 1
            print(f"  ok ({time.time() - t1:.2f} s)", flush=True)
        except Exception as exc:  # keep going: a sanitizer run should report every scenario it can
            failed += 1
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            print(f"  FAILED {type(exc).__name__}: {msg}", flush=True)
            try:
                _sync(device)
            except Exception:
                context_lost = True
    print(f"{len(items)} scenarios in {time.time() - t0:.1f} s", flush=True)
    print(f"{WORKLOAD_MARK} scenarios={done} calls={calls} failed={failed} skipped=0", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
