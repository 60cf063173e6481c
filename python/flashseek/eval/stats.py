"""Arithmetic of the summary: pure Python, so the CPU tests can check it without torch."""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Sequence

from flashseek.eval.dense_twin import summarize_dense
from flashseek.eval.fp8_goals import summarize_fp8


def geomean(values: Iterable[float]) -> Optional[float]:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def median(values: Sequence[float]) -> Optional[float]:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


def quantile(values: Sequence[float], q: float) -> Optional[float]:
    """Linear interpolation between order statistics (numpy's default)."""
    vals = sorted(values)
    if not vals:
        return None
    pos = q * (len(vals) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def spread(samples: Sequence[float]) -> float:
    """Half the interquartile range: robust to a single preempted sample, unlike (max - min) / 2."""
    if len(samples) < 2:
        return 0.0
    return 0.5 * (quantile(samples, 0.75) - quantile(samples, 0.25))


def speedup(ours_us: Optional[float], baselines_us: Dict[str, float]) -> Optional[float]:
    """Fastest comparable baseline time over our time; None when either is missing."""
    times = [t for t in baselines_us.values() if t is not None and t > 0]
    if not times or not ours_us or ours_us <= 0:
        return None
    return min(times) / ours_us


def per_baseline(records: List[dict]) -> Dict[str, dict]:
    """Each baseline alone: the geomean of its time over ours on the correct scenarios it ran, and how many of
    those we match or beat (the headline speedup is against the fastest of them, scenario by scenario)."""
    ratios: Dict[str, List[float]] = {}
    for r in records:
        ours = r.get("us")
        if not r.get("correct") or not ours or ours <= 0:
            continue
        for name, t in (r.get("baselines") or {}).items():
            if t is not None and t > 0:
                ratios.setdefault(name, []).append(t / ours)
    return {name: {"geomean_speedup": geomean(v), "at_parity": sum(1 for x in v if x >= 1.0), "scenarios": len(v)}
            for name, v in sorted(ratios.items())}


def summarize(records: List[dict]) -> dict:
    """The summary block of results-schema.md, plus per-family numbers."""
    with_speedup = [r for r in records if r.get("speedup") is not None]
    worst = min(with_speedup, key=lambda r: r["speedup"]) if with_speedup else None
    fams: Dict[str, List[dict]] = {}
    for r in records:
        fams.setdefault(r["family"], []).append(r)
    per_family = {}
    for fam, rs in fams.items():
        sp = [r["speedup"] for r in rs if r.get("speedup") is not None]
        per_family[fam] = {
            "total": len(rs),
            "correct": sum(1 for r in rs if r.get("correct")),
            "errors": sum(1 for r in rs if r.get("error")),
            "geomean_speedup": geomean(sp),
            "at_parity": sum(1 for v in sp if v >= 1.0),
            "with_baseline": len(sp),
            "median_roofline_frac": median([r.get("roofline_frac") for r in rs if r.get("roofline_frac")]),
        }
    doc = {
        "total": len(records),
        "correct": sum(1 for r in records if r.get("correct")),
        "errors": sum(1 for r in records if r.get("error")),
        "unsupported": sum(1 for r in records if r.get("unsupported")),
        "geomean_speedup": geomean(r["speedup"] for r in with_speedup),
        "with_baseline": len(with_speedup),
        "at_parity": sum(1 for r in with_speedup if r["speedup"] >= 1.0),
        "worst": None if worst is None else {"name": worst["name"], "speedup": worst["speedup"]},
        "per_family": per_family,
    }
    doc["per_baseline"] = per_baseline(records)
    fp8 = summarize_fp8(records)
    if fp8 is not None:
        doc["fp8_goals"] = fp8
    dense = summarize_dense(records)
    if dense is not None:
        doc["dense_twin"] = dense
    return doc
