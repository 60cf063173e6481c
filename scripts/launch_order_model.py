#!/usr/bin/env python3
"""A list-scheduling model of the one-tile kernel's causal grid (docs/perf-log.md entry 66): each CTA starts on the
first SM to free up, in launch order, and costs its key blocks plus a fixed cost of `overhead` blocks. It compares
the order the kernel launched in before `lpt` (each (sequence, KV head) pair's m blocks from the heaviest, pair after
pair) with `lpt`'s (sections of pairs whose K/V fit an L2 share; in a section, every pair's heaviest tile first), and
prints each against the balanced bound (total cost / SMs). A model, not a measurement: it says which scenarios the
order can move and by about how much.

  python3 scripts/launch_order_model.py [--sms 132] [--overhead 1.0] [--l2-mb 40]
"""
import argparse
import heapq
from dataclasses import dataclass
from typing import List


@dataclass(frozen=True)
class CausalGrid:
    name: str
    heads_kv: int
    qheads_per_kvhead: int
    seqlen: int        # every sequence's queries and keys (square causal)
    head_dim: int      # padded d and dv (their sum sets the K/V bytes a pair re-reads)
    head_dim_v: int
    batch: int = 1
    block_m: int = 128
    block_n: int = 128

    def key_blocks(self, m_block: int) -> int:
        last_token = min(self.seqlen - 1, ((m_block + 1) * self.block_m - 1) // self.qheads_per_kvhead)
        return (last_token + 1 + self.block_n - 1) // self.block_n

    @property
    def m_blocks(self) -> int:
        return (self.seqlen * self.qheads_per_kvhead + self.block_m - 1) // self.block_m

    def pair_after_pair(self) -> List[int]:
        return [self.key_blocks(m) for _ in range(self.batch * self.heads_kv) for m in reversed(range(self.m_blocks))]

    def lpt(self, l2_bytes: int) -> List[int]:
        pairs = self.batch * self.heads_kv
        kv_bytes = self.seqlen * (self.head_dim + self.head_dim_v) * 2
        section = max(1, min(pairs, l2_bytes // kv_bytes))
        order = []
        for first in range(0, pairs, section):
            in_section = min(section, pairs - first)
            for m in reversed(range(self.m_blocks)):
                order += [self.key_blocks(m)] * in_section
        return order


def makespan(costs: List[int], sms: int, overhead: float) -> float:
    free_at = [0.0] * sms
    for cost in costs:
        start = heapq.heappop(free_at)
        heapq.heappush(free_at, start + cost + overhead)
    return max(free_at)


def balanced_bound(costs: List[int], sms: int, overhead: float) -> float:
    return (sum(costs) + overhead * len(costs)) / sms


# The grid's one-tile causal prefills where the order can matter (heads as in python/flashseek/testing/grid.py).
GRIDS = [
    CausalGrid("MLAp16 q4k", 16, 1, 4096, 192, 128),
    CausalGrid("MLAp16 4q2k", 16, 1, 2048, 192, 128, batch=4),
    CausalGrid("MLAp128 q4k", 128, 1, 4096, 192, 128),
    CausalGrid("G9 2q4k (d256)", 8, 2, 4096, 256, 256, batch=2, block_n=80),
    CausalGrid("G27 2q4k", 16, 2, 4096, 128, 128, batch=2),
    CausalGrid("P3 q8k (d96)", 32, 1, 8192, 96, 96),
    CausalGrid("L8 q8k", 8, 4, 8192, 128, 128),
    CausalGrid("Q7 q8k", 4, 7, 8192, 128, 128),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--overhead", type=float, default=1.0, help="a tile's fixed cost, in key blocks")
    ap.add_argument("--l2-mb", type=int, default=40, help="lpt's L2 share (FLASHSEEK_EXPERIMENT=lpt=MB)")
    args = ap.parse_args()
    print(f"{'grid':18s} {'tiles':>6s} {'pair after pair':>16s} {'lpt':>6s} {'lpt / before':>13s}")
    for g in GRIDS:
        before = g.pair_after_pair()
        bound = balanced_bound(before, args.sms, args.overhead)
        a = makespan(before, args.sms, args.overhead) / bound
        b = makespan(g.lpt(args.l2_mb << 20), args.sms, args.overhead) / bound
        print(f"{g.name:18s} {len(before):6d} {a:16.3f} {b:6.3f} {b / a:13.3f}")


if __name__ == "__main__":
    main()
