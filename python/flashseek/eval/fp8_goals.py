"""Issue #5's two fp8 speed goals, measured by the evaluator in the same run as bf16: each fp8-family scenario is
also timed as its bf16 twin (the same shapes, q, k and v in bf16), and
  decode  (every query length <= 16, every sequence >= 8k keys): e4m3 time <= 0.55 x bf16 time;
  prefill (d 128 or 256, >= 8k query tokens, a sequence >= 1k): e4m3 TFLOP/s >= 1.5 x bf16 TFLOP/s,
          i.e. e4m3 time <= bf16 time / 1.5.
Scenarios of the family outside both shapes are reported with their ratio and no goal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

if TYPE_CHECKING:  # records-only functions (stats, report) need no grid import
    from flashseek.testing.grid import Scenario

DECODE_MAX_TIME_RATIO = 0.55
PREFILL_MIN_RATE_RATIO = 1.5


def twin_of(s: Scenario) -> Scenario:
    """The same call with q, k and v in bf16 (no descales)."""
    return s.with_(name=s.name + "#bf16", dtype="bf16", kv_dtype=None, descale="none")


def goal_of(s: Scenario) -> Optional[str]:
    """'decode', 'prefill' or None: which of the issue's goals this fp8 scenario's shape is held to."""
    if not s.has_fp8 or not s.seqs:
        return None
    if max(s.q_lens) <= 16 and min(s.k_lens) >= 8192:
        return "decode"
    if s.head_dim in (128, 256) and s.total_q >= 8192 and max(s.q_lens) >= 1024:
        return "prefill"
    return None


def _met(goal: Optional[str], time_ratio: float) -> Optional[bool]:
    if goal == "decode":
        return time_ratio <= DECODE_MAX_TIME_RATIO
    if goal == "prefill":
        return 1.0 / time_ratio >= PREFILL_MIN_RATE_RATIO
    return None


def summarize_fp8(records: Sequence[dict]) -> Optional[dict]:
    """Per goal: the scenarios held to it, how many meet it, and the worst ratio; None without twin timings."""
    rows = [r for r in records if r.get("us") and r.get("bf16_twin_us")]
    if not rows:
        return None
    out: Dict[str, dict] = {}
    for goal in ("decode", "prefill"):
        held = [r for r in rows if r.get("fp8_goal") == goal]
        ratios = [r["us"] / r["bf16_twin_us"] for r in held]
        out[goal] = {
            "scenarios": len(held),
            "met": sum(1 for x in ratios if _met(goal, x)),
            "worst_time_ratio": max(ratios) if ratios else None,
            "worst": max(held, key=lambda r: r["us"] / r["bf16_twin_us"])["name"] if held else None,
        }
    return out


def report_lines(records: Sequence[dict]) -> List[str]:
    """The report's fp8 section: every scenario with a bf16 twin, its time ratio and goal."""
    rows = [r for r in records if r.get("us") and r.get("bf16_twin_us")]
    if not rows:
        return []
    lines = ["## fp8 against bf16 (issue #5 goals, same run)", "",
             f"Decode (queries <= 16 tokens, >= 8k keys): e4m3 time <= {DECODE_MAX_TIME_RATIO} x bf16. Prefill (d 128 / "
             f"256, >= 8k tokens): e4m3 TFLOP/s >= {PREFILL_MIN_RATE_RATIO} x bf16.", "",
             "| scenario | e4m3 us | bf16 us | e4m3 / bf16 time | goal | met |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.get("fp8_goal") or "~", -r["us"] / r["bf16_twin_us"])):
        ratio = r["us"] / r["bf16_twin_us"]
        met = _met(r.get("fp8_goal"), ratio)
        lines.append(f"| {r['name']} | {r['us']:.4g} | {r['bf16_twin_us']:.4g} | {ratio:.2f} | "
                     f"{r.get('fp8_goal') or '–'} | {'–' if met is None else ('yes' if met else 'no')} |")
    return lines + [""]
