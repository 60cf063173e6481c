"""The floor of each scenario, from two ceilings measured in the same run.

Ceilings: HBM read bandwidth of a read-only kernel over 4 GB (a torch sum over a bf16 tensor: bytes read / time)
and the bf16 tensor rate of an 8192^3 matmul. Per scenario (METHOD.md: count the fewest bytes and the FLOPs):
  bytes = K/V each sequence can see, read once (a cascade's shared prefix once) + Q (+ q_v) + O (+ LSE)
  FLOPs = 4 * Hq * sum over queries of visible keys * (d + dv) / 2  (grid.md; only unmasked work, as FA3 counts)
  floor = max(bytes / bandwidth, FLOPs / tensor rate); roofline_frac = floor / measured time.
Counting is pure Python (numpy-free) so the CPU tests check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from flashseek.testing.grid import Scenario

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "e4m3": 1}


def visible_counts(sq: int, sk: int, causal: bool, window: Tuple[int, int]) -> Tuple[int, int]:
    """(sum over the sq queries of the keys each sees, number of distinct keys any of them sees)."""
    left, right = window
    if causal:
        right = 0
    total, lo_min, hi_max = 0, sk, -1
    off = sk - sq
    for i in range(sq):
        lo = max(0, i + off - left) if left >= 0 else 0
        hi = min(sk - 1, i + off + right) if right >= 0 else sk - 1
        if hi >= lo:
            total += hi - lo + 1
            lo_min, hi_max = min(lo_min, lo), max(hi_max, hi)
    return total, (hi_max - lo_min + 1) if hi_max >= lo_min else 0


@dataclass
class Work:
    kv_bytes: float  # K/V read once
    bytes: float  # everything: K/V + Q + O (+ LSE)
    flops: float

    def floor_us(self, hbm_GBps: float, tflops: float) -> Tuple[float, str]:
        mem = self.bytes / (hbm_GBps * 1e3)  # GB/s = 1e3 bytes/us
        comp = self.flops / (tflops * 1e6)  # TFLOP/s = 1e6 FLOP/us
        return (mem, "memory") if mem >= comp else (comp, "compute")


def scenario_work(s: Scenario) -> Work:
    elem = DTYPE_BYTES[s.cache_dtype]  # K/V (an e4m3 cache against a 16-bit q: one byte)
    q_elem = DTYPE_BYTES[s.dtype]
    out_elem = 2
    hq, hkv, d, dv = s.num_heads_q, s.num_heads_kv, s.head_dim, s.head_dim_v
    vis_sum, kv_keys = 0, 0
    for q, k in s.seqs:
        local_k = len(range(s.cp_rank, k, s.cp_world_size)) if s.cp_world_size > 1 else k
        vs, distinct = visible_counts(q, local_k, s.causal, s.window)
        vis_sum += vs
        kv_keys += distinct
    if s.entry == "cascade":  # the shared prefix needs reading once
        kv_keys -= s.cascade_prefix * (s.batch_size - 1)
    # (MLA decode: K and V are slices of one row of d + dv elements, so the same count holds)
    kv_bytes = kv_keys * hkv * (d + dv) * elem
    q_bytes = s.total_q * hq * (d + (dv if s.q_v else 0)) * q_elem
    o_bytes = s.total_q * hq * dv * out_elem + (s.total_q * hq * 4 if s.return_lse else 0)
    new_kv = 0
    if s.entry == "kvcache" and s.append_new:  # new K/V read and written into the cache
        new_kv = 2 * s.total_q * hkv * (d + dv) * elem
    flops = 4.0 * hq * vis_sum * (d + dv) / 2
    return Work(kv_bytes=float(kv_bytes), bytes=float(kv_bytes + q_bytes + o_bytes + new_kv), flops=flops)


def roofline_fields(s: Scenario, us: Optional[float], hbm_GBps: float, tflops: float) -> dict:
    """Per-scenario numbers for results.json: floor, bound, roofline_frac, K/V GB/s and TFLOP/s."""
    w = scenario_work(s)
    floor, bound = w.floor_us(hbm_GBps, tflops)
    out = {"floor_us": floor, "bound": bound, "kv_bytes": w.kv_bytes, "flops": w.flops}
    if us and us > 0:
        out["roofline_frac"] = floor / us
        out["kv_GBps"] = w.kv_bytes / (us * 1e3)
        out["tflops"] = w.flops / (us * 1e6)
        out["hbm_frac"] = w.bytes / (us * 1e3) / hbm_GBps
    else:
        out["roofline_frac"] = None
    return out


# --------------------------------------------------------------------------------------------------------------
# Measuring the two ceilings (needs a GPU)

def _median_us(fn, repeats: int) -> float:
    from flashseek.eval.timing import event_times_us

    times = sorted(event_times_us(fn, repeats))
    return times[len(times) // 2]


def _hbm_read_GBps(repeats: int) -> float:
    import torch

    x = torch.empty(2 ** 31, dtype=torch.bfloat16, device="cuda")  # 4 GB: far past the 60 MB L2
    for chunk in x.split(2 ** 28):
        chunk.normal_()
    return x.numel() * x.element_size() / (_median_us(lambda: torch.sum(x, dtype=torch.float32), repeats) * 1e3)


def _bf16_TFLOPs(repeats: int) -> float:
    import torch

    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    return 2 * 8192 ** 3 / (_median_us(lambda: a @ b, repeats) * 1e6)


def measure_ceilings(repeats: int = 10) -> dict:
    """{'hbm_GBps': read bandwidth of a sum over 4 GB of bf16, 'bf16_TFLOPs': 8192^3 matmul rate}: medians of
    `repeats` timed runs after warm-up, on random data (never zeros)."""
    import torch

    hbm = _hbm_read_GBps(repeats)
    torch.cuda.empty_cache()
    tf = _bf16_TFLOPs(repeats)
    torch.cuda.empty_cache()
    return {"hbm_GBps": round(hbm, 1), "bf16_TFLOPs": round(tf, 1)}
