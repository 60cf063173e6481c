"""CUDA graphs, as vLLM uses them: capture one mixed step once, then replay it with new device data every step.

The captured step (GQA 32/8, d128, paged KV with page 16, causal, bf16): 2 prefill chunks of up to 256 tokens and
62 decodes (some speculative, up to 4 tokens, some empty padding entries) against up to 1024 keys each, with
scheduler_metadata from get_scheduler_metadata computed before capture and passed in, `out` preallocated and
the LSE returned. Before every replay the engine's work is imitated: new sequence lengths within the captured
maxima copied into seqused_k and cu_seqlens_q (the prefill chunks move around the batch), a new block table
(pages in a new random order), fresh q and K/V cache values, and the metadata recomputed into its buffer. Every
replay is compared with an eager call on the same inputs: the same kernels run, so the result should be bitwise
equal (a replay counts as a mismatch only past 1e-6 or where NaNs differ); every 100th replay (and the first and
last) is also checked against the fp32 reference, with NaN in every cache slot no sequence uses.

A second configuration replays a decode batch that the library splits (8/1 heads, 16k keys, sinks) so that the
split partials and the combine kernel are replayed too. FLASHSEEK_GRAPH_REPLAYS sets the main count (1000).
"""

import math
import os

import pytest

import flashseek

_REASON = flashseek.unavailable_reason()
if _REASON is not None:
    pytest.skip(f"flashseek kernels unavailable: {_REASON}", allow_module_level=True)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from reliability_cases import DEVICE, bitwise_equal, check_against_reference, planned_splits, sync  # noqa: E402
from reliability_report import record  # noqa: E402

SEED = int(os.environ.get("FLASHSEEK_RELIABILITY_SEED", "1"))
REPLAYS = int(os.environ.get("FLASHSEEK_GRAPH_REPLAYS", "1000"))
CHECK_EVERY = 100
TOL = 1e-6


class Step:
    """The static buffers of one captured step and the way the engine refills them."""

    def __init__(self, *, hq, hkv, d, page, batch, n_prefill, max_q, max_k, sinks=False, seed=0):
        dev = torch.device(DEVICE)
        self.hq, self.hkv, self.d, self.page, self.batch = hq, hkv, d, page, batch
        self.n_prefill, self.max_q, self.max_k = n_prefill, max_q, max_k
        self.width = math.ceil(max_k / page)
        self.num_blocks = batch * self.width + 17
        self.total_q = n_prefill * max_q + (batch - n_prefill) * 4  # decode steps of up to 4 tokens
        self.gen = torch.Generator(device=dev).manual_seed(seed)
        self.rng = np.random.default_rng(seed)
        dt = torch.bfloat16
        self.q = torch.empty(self.total_q, hq, d, dtype=dt, device=dev)
        self.k = torch.empty(self.num_blocks, page, hkv, d, dtype=dt, device=dev)
        self.v = torch.empty(self.num_blocks, page, hkv, d, dtype=dt, device=dev)
        table = torch.zeros(batch, self.width + 3, dtype=torch.int32, device=dev)  # vLLM: a wider table's view
        self.block_table = table[:, :self.width]
        self.seqused_k = torch.zeros(batch, dtype=torch.int32, device=dev)
        self.cu_seqlens_q = torch.zeros(batch + 1, dtype=torch.int32, device=dev)
        self.s_aux = torch.zeros(hq, dtype=torch.float32, device=dev) if sinks else None
        self.out_graph = torch.empty(self.total_q, hq, d, dtype=dt, device=dev)
        self.out_eager = torch.empty_like(self.out_graph)
        self.refill()
        self.metadata = flashseek.get_scheduler_metadata(**self.metadata_kwargs())

    def call_kwargs(self):
        kw = dict(q=self.q, k=self.k, v=self.v, max_seqlen_q=self.max_q, cu_seqlens_q=self.cu_seqlens_q,
                  max_seqlen_k=self.max_k, seqused_k=self.seqused_k, block_table=self.block_table, causal=True,
                  return_softmax_lse=True, num_splits=0)
        if self.s_aux is not None:
            kw["s_aux"] = self.s_aux
        return kw

    def metadata_kwargs(self):
        return dict(batch_size=self.batch, max_seqlen_q=self.max_q, max_seqlen_k=self.max_k, num_heads_q=self.hq,
                    num_heads_kv=self.hkv, headdim=self.d, headdim_v=self.d, cache_seqlens=self.seqused_k,
                    qkv_dtype=torch.bfloat16, cu_seqlens_q=self.cu_seqlens_q, page_size=self.page, causal=True,
                    num_splits=0)

    def refill(self):
        """New lengths (host draw, one copy each), a new block table, fresh values: the engine's work per step."""
        r = self.rng
        q_lens = [int(r.choice([1, 1, 1, 1, 1, 1, 1, 0, 2, 4])) for _ in range(self.batch)]
        for i in r.choice(self.batch, self.n_prefill, replace=False):
            q_lens[i] = int(r.integers(0, self.max_q + 1)) if r.random() < 0.1 else int(r.integers(1, self.max_q + 1))
        k_lens = [int(r.integers(max(q, 1), self.max_k + 1)) if r.random() < 0.97 else q for q in q_lens]
        self.q_lens, self.k_lens = q_lens, k_lens
        cu = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
        assert cu[-1] <= self.total_q
        self.cu_seqlens_q.copy_(torch.from_numpy(cu))
        self.seqused_k.copy_(torch.tensor(k_lens, dtype=torch.int32))
        perm = torch.randperm(self.num_blocks, generator=self.gen, device=DEVICE)[:self.batch * self.width]
        self.block_table.copy_(perm.view(self.batch, self.width).to(torch.int32))
        self.q.normal_(generator=self.gen)
        self.k.normal_(generator=self.gen)
        self.v.normal_(generator=self.gen)
        if self.s_aux is not None:
            self.s_aux.normal_(generator=self.gen)

    def poison_unused_slots(self):
        """NaN wherever no sequence's key lives (for the steps checked against the reference)."""
        table = self.block_table.cpu().numpy()
        used = np.zeros((self.num_blocks, self.page), dtype=bool)
        for b, n in enumerate(self.k_lens):
            pages = -(-n // self.page)
            if pages:
                used[table[b, :pages - 1]] = True
                used[table[b, pages - 1], :n - (pages - 1) * self.page] = True
        mask = torch.from_numpy(~used).to(DEVICE)
        self.k[mask] = float("nan")
        self.v[mask] = float("nan")


def _compare(out_g, lse_g, out_e, lse_e, n):
    """(bitwise equal, max |diff| over out and LSE, NaN patterns agree) on the rows the sequences cover."""
    a, b = out_g[:n], out_e[:n]
    la, lb = lse_g[:, :n], lse_e[:, :n]
    if bitwise_equal(a, b) and bitwise_equal(la, lb):
        return True, 0.0, True
    same_nan = torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.isnan(la), torch.isnan(lb))
    same_inf = torch.equal(torch.isinf(la), torch.isinf(lb))
    fin = lambda x: torch.nan_to_num(x.float(), nan=0.0, posinf=0.0, neginf=0.0)  # noqa: E731
    diff = max((fin(a) - fin(b)).abs().max().item() if n else 0.0,
               (fin(la) - fin(lb)).abs().max().item() if n else 0.0)
    return False, diff, same_nan and same_inf


def _capture(fn):
    """(replay, static outputs) of fn captured into a CUDA graph. Off CUDA (dry runs of this file with a
    stand-in binding) replay calls fn again and copies its results into the first call's outputs."""
    if torch.device(DEVICE).type != "cuda":
        static = fn()
        return (lambda: [s.copy_(r) for s, r in zip(static, fn())]), static
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture: no lazy initialisation may happen inside it
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static = fn()
    return graph.replay, static


def _replay_and_compare(name, step, replays, main):
    kw = step.call_kwargs()
    md = step.metadata
    kw["scheduler_metadata"] = md
    replay, (_, lse_graph) = _capture(lambda: flashseek.flash_attn_varlen_func(**kw, out=step.out_graph))
    splits = planned_splits(kw)

    stats = dict(kind="graph", name=name, main=main, replays=0, mismatches=0, bitwise_mismatches=0,
                 max_abs_diff=0.0, reference_checks=0, reference_failures=0, planned_splits=splits)
    first_bad = []
    for i in range(replays):
        step.refill()
        checked = i == 0 or i == replays - 1 or (i + 1) % CHECK_EVERY == 0
        if checked:
            step.poison_unused_slots()
        md.copy_(flashseek.get_scheduler_metadata(**step.metadata_kwargs()))
        step.out_graph.fill_(float("nan"))
        step.out_eager.fill_(float("nan"))
        replay()
        _, lse_eager = flashseek.flash_attn_varlen_func(**kw, out=step.out_eager)
        n = sum(step.q_lens)
        bitwise, diff, same_special = _compare(step.out_graph, lse_graph, step.out_eager, lse_eager, n)
        stats["replays"] += 1
        stats["max_abs_diff"] = max(stats["max_abs_diff"], diff)
        if not bitwise:
            stats["bitwise_mismatches"] += 1
            if diff > TOL or not same_special:
                stats["mismatches"] += 1
                if not first_bad:
                    first_bad.append(f"replay {i}: graph vs eager max |diff| {diff:.3g}, NaN/Inf pattern "
                                     f"{'same' if same_special else 'differs'} (q_lens {step.q_lens[:8]}..., "
                                     f"k_lens {step.k_lens[:8]}...)")
        if checked:
            res = check_against_reference(kw, step.out_graph, lse_graph)
            stats["reference_checks"] += 1
            if not res.correct:
                stats["reference_failures"] += 1
                first_bad.append(f"replay {i} against the reference: {res.summary()}")
    sync(DEVICE)
    stats["reason"] = "; ".join(first_bad) if first_bad else None
    stats["ok"] = stats["mismatches"] == 0 and stats["reference_failures"] == 0
    record("graph_replay", **stats)
    return stats


def test_mixed_step_replays_match_eager():
    step = Step(hq=32, hkv=8, d=128, page=16, batch=64, n_prefill=2, max_q=256, max_k=1024, seed=SEED)
    stats = _replay_and_compare("mixed-L8-p16", step, REPLAYS, main=True)
    assert stats["replays"] == REPLAYS
    assert stats["ok"], (f"{stats['mismatches']} of {REPLAYS} replays differ from eager beyond {TOL}, "
                         f"{stats['reference_failures']} of {stats['reference_checks']} reference checks failed "
                         f"(seed {SEED}): {stats['reason']}")


def test_split_decode_replays_match_eager():
    step = Step(hq=8, hkv=1, d=128, page=16, batch=4, n_prefill=0, max_q=4, max_k=16384, sinks=True, seed=SEED + 1)
    stats = _replay_and_compare("decode-splits-sinks-L70t8-p16", step, max(1, REPLAYS // 5), main=False)
    assert stats["planned_splits"] is None or stats["planned_splits"] > 1, (
        f"the library planned {stats['planned_splits']} splits: this test no longer replays the combine")
    assert stats["ok"], (f"{stats['mismatches']} replays differ from eager, {stats['reference_failures']} "
                         f"reference checks failed (seed {SEED}): {stats['reason']}")
