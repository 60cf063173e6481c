"""A diagnostic for the decode families: each paged decode is also timed on a dense varlen copy of its keys and values
(the same values, cu_seqlens_k instead of a block table), as `dense_twin_us`. cuDNN, the fastest baseline on most
decodes, runs on a dense copy; the twin separates what the paged layout costs us from what our kernel costs
against cuDNN's on the same layout (docs/perf-log.md entry 60). Not a target and not a baseline: the speedups and
the geomean do not use it."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence

DENSE_TWIN_FAMILIES = ("decode-paged", "decode-splitkv", "small-decode")


def wants_dense_twin(s) -> bool:
    """Whether the runner also times this scenario with its KV as a dense varlen copy."""
    return (s.family in DENSE_TWIN_FAMILIES and s.kv_layout == "paged" and s.entry == "varlen"
            and not s.has_fp8 and not s.q_v)


def dense_twin_of(s):
    """The same call on a dense varlen copy of the KV (same lengths and values; no block table)."""
    return s.with_(name=s.name + "#dense", kv_layout="varlen")


def _geomean(xs: List[float]) -> Optional[float]:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize_dense(records: Sequence[dict]) -> Optional[dict]:
    """paged_over_dense: our paged time over our dense time (what the layout costs us); dense_over_cudnn: our dense
    time over cuDNN's (dense too: the kernels compared on one layout). None when no record has a twin."""
    rows = [r for r in records if r.get("dense_twin_us") and r.get("us") and r.get("correct")]
    if not rows:
        return None
    with_cudnn = [r for r in rows if isinstance((r.get("baselines") or {}).get("cudnn"), (int, float))]
    return {
        "scenarios": len(rows),
        "paged_over_dense": _geomean([r["us"] / r["dense_twin_us"] for r in rows]),
        "dense_over_cudnn": _geomean([r["dense_twin_us"] / r["baselines"]["cudnn"] for r in with_cudnn]),
        "with_cudnn": len(with_cudnn),
    }


def report_lines(records: Sequence[dict]) -> List[str]:
    summary = summarize_dense(records)
    if summary is None:
        return []
    out = ["## Decodes on a dense copy of the KV (diagnostic)", "",
           f"- {summary['scenarios']} paged decodes also timed on a dense varlen copy: ours paged / ours dense, "
           f"geomean {summary['paged_over_dense']:.3f}."]
    if summary["dense_over_cudnn"] is not None:
        out.append(f"- Ours on the dense copy / cuDNN on its dense copy, geomean {summary['dense_over_cudnn']:.3f} "
                   f"over {summary['with_cudnn']}.")
    out += ["", "| scenario | ours paged us | ours dense us | paged / dense | cudnn us | dense / cudnn |",
            "|---|---|---|---|---|---|"]
    for r in sorted((r for r in records if r.get("dense_twin_us") and r.get("us")), key=lambda r: r["name"]):
        cudnn = (r.get("baselines") or {}).get("cudnn")
        cudnn_ok = isinstance(cudnn, (int, float))
        out.append(f"| {r['name']} | {r['us']:.4g} | {r['dense_twin_us']:.4g} | {r['us'] / r['dense_twin_us']:.3f} | "
                   f"{cudnn if cudnn_ok else '–'} | "
                   f"{(r['dense_twin_us'] / cudnn) if cudnn_ok else float('nan'):.3f} |")
    return out + [""]
