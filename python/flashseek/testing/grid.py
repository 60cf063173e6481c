"""The scenario grids of /work/shared/grid.md, as data.

A Scenario describes one call completely (shapes, layout, every argument, how to time it), so that the tests,
the evaluator and a person reading a failure all mean the same thing by a name. Names are unique and stable
across runs: "<family>/<heads>/<batch>[/<feature>...]", e.g. "decode-paged/L8/128q1s8k/p16".

This module needs no torch: dtypes are strings ("bf16", "fp16", "e4m3").
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

SeqLens = Tuple[Tuple[int, int], ...]  # (q_len, k_len) per sequence; k_len counts the q_len new tokens

# --------------------------------------------------------------------------------------------------------------
# Head configurations (grid.md): Hq, Hkv, d, dv, and the few per-model constants that every layer uses (G27's
# scale). Features that only some layers or some deployments use (sinks, windows, softcap) belong to families.


@dataclass(frozen=True)
class Heads:
    label: str
    num_heads_q: int
    num_heads_kv: int
    head_dim: int
    head_dim_v: int
    softmax_scale: Optional[float] = None  # None = head_dim ** -0.5


HEADS: Dict[str, Heads] = {h.label: h for h in [
    Heads("L8", 32, 8, 128, 128),
    Heads("L70", 64, 8, 128, 128),
    Heads("L70t4", 16, 2, 128, 128),
    Heads("L70t8", 8, 1, 128, 128),
    Heads("L405t8", 16, 1, 128, 128),
    Heads("Q7", 28, 4, 128, 128),
    Heads("Q05", 14, 2, 64, 64),
    Heads("MHA", 32, 32, 128, 128),
    Heads("P3", 32, 32, 96, 96),
    Heads("OSS", 64, 8, 64, 64),
    Heads("OSSt8", 8, 1, 64, 64),
    Heads("G9", 16, 8, 256, 256),
    Heads("G27", 32, 16, 128, 128, softmax_scale=144 ** -0.5),
    Heads("MLAp16", 16, 16, 192, 128),
    Heads("MLAp128", 128, 128, 192, 128),
    # MLA decode: q (64) . k_pe + q_v (512) . kv_c, one KV head; the model's scale is 1/sqrt(192).
    Heads("MLAd16", 16, 1, 64, 512, softmax_scale=192 ** -0.5),
    Heads("MLAd128", 128, 1, 64, 512, softmax_scale=192 ** -0.5),
    Heads("VIT72", 16, 16, 72, 72),
    Heads("VIT80", 16, 16, 80, 80),
]}


def custom_heads(num_heads_q: int, num_heads_kv: int, head_dim: int, head_dim_v: Optional[int] = None) -> Heads:
    """Heads not named in grid.md (operator grid, edge cases, random tests): label '<Hq>-<Hkv>-d<d>'."""
    dv = head_dim if head_dim_v is None else head_dim_v
    label = f"{num_heads_q}-{num_heads_kv}-d{head_dim}" + ("" if dv == head_dim else f"-{dv}")
    return Heads(label, num_heads_q, num_heads_kv, head_dim, dv)


# --------------------------------------------------------------------------------------------------------------
# Families (grid.md section 1) and the sets that decide timing mode and roofline reporting.

FAMILIES: Tuple[str, ...] = (
    "prefill-dense", "prefill-varlen", "decode-paged", "decode-splitkv", "spec-decode", "mixed",
    "sliding-window", "softcap", "sinks", "kvcache", "fp8", "mla", "lse", "edge", "small-decode",
)
OPERATOR_FAMILY = "operator-grid"
ALL_FAMILIES: Tuple[str, ...] = FAMILIES + (OPERATOR_FAMILY,)
# Families whose every member the engine replays in CUDA graphs (the brief); other families' members are
# replayed too when their batch holds decodes (see _timing_mode).
GRAPH_FAMILIES = frozenset({"decode-paged", "decode-splitkv", "spec-decode", "mixed", "small-decode"})
DECODE_MAX_Q = 16  # a sequence with at most this many new tokens is a decode (or speculative decode) step

ENTRIES = ("varlen", "kvcache", "cascade")
KV_LAYOUTS = ("paged", "varlen", "batched")
DTYPES = ("bf16", "fp16", "e4m3")

UNSUPPORTED_FP8 = "fp8 not supported yet"  # no longer used by the grids; kept for tools
# MLA decode and context parallel are supported; the markers stay for tests that plant them.
UNSUPPORTED_MLA_DECODE = "MLA decode (d 64/512 with q_v) not supported yet"
UNSUPPORTED_CP = "context parallel (cp_world_size > 1) not supported yet"


@dataclass(frozen=True)
class Scenario:
    """One call of the operator, described completely. Defaults are grid.md's: bf16, paged KV with page 16,
    causal, scale d^-0.5, out preallocated, NaN in every KV slot no sequence uses."""

    name: str
    family: str
    heads: str  # label of the head configuration
    num_heads_q: int
    num_heads_kv: int
    head_dim: int
    head_dim_v: int
    seqs: SeqLens
    batch: str = ""  # the batch notation the seqs came from (for people; seqs is the truth)
    dtype: str = "bf16"  # q's dtype (and k's, v's unless kv_dtype says otherwise)
    kv_dtype: Optional[str] = None  # "e4m3": an fp8 KV cache against a 16-bit q (dequantized in the kernel)
    kv_layout: str = "paged"  # paged: (num_blocks, page, Hkv, d) + block_table + seqused_k
    #                          varlen: (total_k, Hkv, d) + cu_seqlens_k
    #                          batched: (B, S_max, Hkv, d) + seqused_k, rows longer than used (gaps, NaN)
    page_size: int = 16
    num_blocks: Optional[int] = None  # None = the pages the batch needs plus spare (unused, NaN)
    block_table_repeats: bool = False  # operator grid: random ids in [0, num_blocks), pages may repeat
    causal: bool = True
    window: Tuple[int, int] = (-1, -1)  # (left, right), -1 = unbounded
    softcap: float = 0.0
    softmax_scale: Optional[float] = None  # None = head_dim ** -0.5
    sinks: bool = False
    sink_value: Optional[float] = None  # None = s_aux ~ N(0,1) per head; a number = that value for every head
    num_splits: int = 0
    use_scheduler_metadata: bool = False
    return_lse: bool = False
    out_given: bool = True
    hnd: bool = False  # cache laid out head-major: the (num_blocks, page, Hkv, d) view has head stride page*d
    q_row_pad: int = 0  # extra elements per q (and out) row: q is a view of a wider buffer (vLLM's qkv split)
    block_table_pad: int = 0  # extra columns: block_table is a view whose row stride exceeds its width
    kv_gap: int = 0  # batched layout: extra unused (NaN) slots after the longest sequence's keys
    entry: str = "varlen"  # varlen: flash_attn_varlen_func; kvcache: flash_attn_with_kvcache;
    #                        cascade: shared-prefix pass + suffix pass + merge_attn_states vs one plain call
    cascade_prefix: int = 0  # cascade: shared prefix length in keys (a multiple of page_size)
    # flash_attn_with_kvcache features
    leftpad: bool = False
    cache_batch_idx: bool = False
    append_new: bool = False  # the q_len new tokens' K/V are passed as k, v and appended into the cache
    rotary: Optional[str] = None  # "interleaved" | "neox"
    rotary_dim: int = 0
    # fp8, MLA decode, context parallel
    descale: str = "none"  # fp8: "random" (B, Hkv) | "stride0" (a broadcast scalar) | "ones"
    q_v: bool = False
    cp_world_size: int = 1
    cp_rank: int = 0
    unsupported_reason: Optional[str] = None  # the library rejects this today: record as an error, never drop
    timing: str = "eager"  # "graph" | "eager"
    note: str = ""

    # ---- derived ---------------------------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        return len(self.seqs)

    @property
    def q_lens(self) -> List[int]:
        return [q for q, _ in self.seqs]

    @property
    def k_lens(self) -> List[int]:
        return [k for _, k in self.seqs]

    @property
    def total_q(self) -> int:
        return sum(self.q_lens)

    @property
    def scale(self) -> float:
        """softmax_scale, or FA3's default: d^-0.5, (d + dv)^-0.5 with q_v (the logits sum d + dv products)."""
        if self.softmax_scale is not None:
            return self.softmax_scale
        return (self.head_dim + (self.head_dim_v if self.q_v else 0)) ** -0.5

    @property
    def effective_window(self) -> Tuple[int, int]:
        """The window the kernel must apply: causal forces right = 0 (semantics.md)."""
        left, right = self.window
        return (left, 0) if self.causal else (left, right)

    @property
    def is_decode_like(self) -> bool:
        """Every sequence with queries is a decode or speculative step: bytes, not FLOPs, set the floor."""
        qs = [q for q in self.q_lens if q > 0]
        return bool(qs) and max(qs) <= DECODE_MAX_Q

    @property
    def has_decodes(self) -> bool:
        return any(0 < q <= DECODE_MAX_Q for q in self.q_lens)

    @property
    def is_fp8(self) -> bool:
        """q (and with it k and v) is e4m3."""
        return self.dtype == "e4m3"

    @property
    def cache_dtype(self) -> str:
        return self.kv_dtype or self.dtype

    @property
    def has_fp8(self) -> bool:
        """Some operand is e4m3 (all three, or the KV cache): the fp8 accuracy rules apply."""
        return self.is_fp8 or self.cache_dtype == "e4m3"

    @property
    def rule_dtype(self) -> str:
        """The dtype name whose tolerances judge the output (tolerance.py)."""
        return "e4m3" if self.has_fp8 else self.dtype

    def with_(self, **changes) -> "Scenario":
        """A copy with fields changed (the name is not recomputed: pass one when identity changes)."""
        return dataclasses.replace(self, **changes)


# --------------------------------------------------------------------------------------------------------------
# Batch notation: `q<L>` = (L, L); `q<Q>s<K>` = (Q, K); `N` in front repeats; `_` joins; `k` = x1024.

_PART = re.compile(r"^(\d+)?q(\d+k?)(?:s(\d+k?))?$")


def _number(text: str) -> int:
    return int(text[:-1]) * 1024 if text.endswith("k") else int(text)


def parse_batch(notation: str) -> SeqLens:
    """'q2k_32q1s2k' -> ((2048, 2048),) + ((1, 2048),) * 32. Raises ValueError naming the bad part."""
    seqs: List[Tuple[int, int]] = []
    if not notation:
        raise ValueError("batch notation: empty")
    for part in notation.split("_"):
        m = _PART.match(part)
        if m is None:
            raise ValueError(f"batch notation {notation!r}: cannot parse {part!r} "
                             f"(expected [N]q<Q>[s<K>], numbers may end in k = x1024)")
        count = int(m.group(1)) if m.group(1) else 1
        q = _number(m.group(2))
        k = _number(m.group(3)) if m.group(3) else q
        seqs.extend([(q, k)] * count)
    return tuple(seqs)


# --------------------------------------------------------------------------------------------------------------
# Builders


def _timing_mode(family: str, seqs: SeqLens) -> str:
    """CUDA-graph replay where the engine replays graphs: decode-like families, and any batch that holds decode
    steps (vLLM captures decode and mixed batches); eager for prefill-only batches."""
    if family in GRAPH_FAMILIES or any(0 < q <= DECODE_MAX_Q for q, _ in seqs):
        return "graph"
    return "eager"


def make_scenario(family: str, heads, batch, *, suffix: Sequence[str] = (), name: Optional[str] = None,
                  label: str = "custom", **fields) -> Scenario:
    """Scenario from a family, a head configuration (label or Heads), a batch (notation, or seqs with a label
    for the name) and fields. The name is '<family>/<heads>/<batch>/<suffix...>' unless given; timing follows
    _timing_mode unless given."""
    h = HEADS[heads] if isinstance(heads, str) else heads
    if isinstance(batch, str):
        notation, seqs = batch, parse_batch(batch)
    else:
        seqs = tuple((int(q), int(k)) for q, k in batch)
        notation = label
    if name is None:
        name = "/".join([family, h.label, notation, *[s for s in suffix if s]])
    fields.setdefault("softmax_scale", h.softmax_scale)
    fields.setdefault("timing", _timing_mode(family, seqs))
    return Scenario(name=name, family=family, heads=h.label, num_heads_q=h.num_heads_q,
                    num_heads_kv=h.num_heads_kv, head_dim=h.head_dim, head_dim_v=h.head_dim_v, seqs=seqs,
                    batch=notation, **fields)


def _win(left: int) -> Tuple[int, int]:
    """A decoder sliding window of W tokens as vLLM passes it: (W-1, 0) with causal."""
    return (left - 1, 0)


# --------------------------------------------------------------------------------------------------------------
# Section 1: the performance and correctness grid


def _prefill_dense() -> List[Scenario]:
    out = []
    for heads in ["L8", "L70", "Q7", "OSS", "G27", "P3"]:
        for batch in ["q1k", "q8k", "q32k", "8q2k"]:
            out.append(make_scenario("prefill-dense", heads, batch, kv_layout="varlen"))
    return out


def _prefill_varlen() -> List[Scenario]:
    f = "prefill-varlen"
    ragged = "q257_q1k_q63_q4093"
    return [
        make_scenario(f, "L8", ragged, kv_layout="varlen"),
        make_scenario(f, "L8", "16q512", kv_layout="varlen"),
        make_scenario(f, "Q05", ragged, kv_layout="varlen"),
        make_scenario(f, "L70", "16q512", kv_layout="varlen"),
        # encoders: non-causal (SigLIP-so400m 27x27 patches at d72; a ViT-H at d80; a plain MHA encoder)
        make_scenario(f, "VIT72", "16q729", suffix=["noncausal"], kv_layout="varlen", causal=False),
        make_scenario(f, "VIT80", ragged, suffix=["noncausal"], kv_layout="varlen", causal=False),
        make_scenario(f, "MHA", "8q2k", suffix=["noncausal"], kv_layout="varlen", causal=False),
        # bidirectional windows: an encoder window of W is (W-1, W-1) without causal
        make_scenario(f, "MHA", "4q2k", suffix=["bidir-w128"], kv_layout="varlen", causal=False,
                      window=(127, 127)),
        make_scenario(f, "VIT80", "16q1k", suffix=["bidir-w256"], kv_layout="varlen", causal=False,
                      window=(255, 255)),
        # gaps between sequences: each sequence owns a row of a batched KV buffer longer than it needs
        make_scenario(f, "L8", ragged, suffix=["gaps"], kv_layout="batched", kv_gap=61,
                      note="batched KV (B, S_max, Hkv, d) with seqused_k; unused tails NaN"),
    ]


def _decode_paged() -> List[Scenario]:
    out = []
    for heads in ["L70t8", "L8", "L70", "Q7", "OSSt8"]:
        for batch in ["8q1s1k", "32q1s2k", "64q1s4k", "128q1s1k", "128q1s8k", "256q1s4k", "512q1s2k"]:
            out.append(make_scenario("decode-paged", heads, batch, suffix=["p16"]))
    return out


def _small_decode() -> List[Scenario]:
    """Not in grid.md's table: the speed issue's small-decode target, one sequence of 1k keys at L8 heads, page 16
    (under graph replay no slower than the fastest baseline; eager wall time per call at most 2x a one-element
    add's). The grid's smallest decode-paged batch has 8 sequences, whose device time alone exceeds that bound."""
    return [make_scenario("small-decode", "L8", "q1s1k", suffix=["p16"])]


def _decode_splitkv() -> List[Scenario]:
    out = []
    for batch in ["q1s32k", "q1s128k", "4q1s64k", "16q1s16k"]:
        for heads in ["L70t8", "L8"]:
            out.append(make_scenario("decode-splitkv", heads, batch, suffix=["p16", "splits0"], num_splits=0))
            out.append(make_scenario("decode-splitkv", heads, batch, suffix=["p16", "splits32-md"],
                                     num_splits=32, use_scheduler_metadata=True))
    return out


def _spec_decode() -> List[Scenario]:
    return [make_scenario("spec-decode", heads, batch, suffix=["p16"])
            for batch in ["32q4s2k", "64q2s1k", "16q8s4k", "16q16s8k"] for heads in ["L8", "L70t8"]]


MIXED_BATCHES = ["q2k_32q1s2k", "2q4k_32q1s1k", "q1ks8k_64q1s4k", "4q512s8k_128q1s2k", "q8k_512q1s1k"]


def _mixed() -> List[Scenario]:
    out = [make_scenario("mixed", heads, batch, suffix=["p16"])
           for batch in MIXED_BATCHES for heads in ["L8", "L70t4", "OSS"]]
    # more than 992 sequences: FA3 turns splits off there
    out.append(make_scenario("mixed", "L8", "q1k_1024q1s1k", suffix=["p16"], note="1025 sequences (> 992)"))
    return out


def _sliding_window() -> List[Scenario]:
    f = "sliding-window"
    mixed = "q2k_32q1s2k"
    out = []
    for heads, w in [("OSS", 128), ("G27", 1024)]:
        for batch in ["q8k", "64q1s8k", mixed]:
            out.append(make_scenario(f, heads, batch, suffix=["p16", f"w{w}"], window=_win(w)))
    for heads in ["G9", "L8"]:  # W4096 at d256 (Gemma-2) and at d128
        for batch in ["q8k", "64q1s8k"]:
            out.append(make_scenario(f, heads, batch, suffix=["p16", "w4096"], window=_win(4096)))
    out.append(make_scenario(f, "L8", mixed, suffix=["p16", "w4096", "longer-than-seqs"], window=_win(4096),
                             note="window longer than every sequence: plain causal"))
    # decode with splits: the window bounds the keys each split may own
    out.append(make_scenario(f, "L70t8", "4q1s64k", suffix=["p16", "w4096", "splits0"], window=_win(4096)))
    out.append(make_scenario(f, "OSSt8", "4q1s64k", suffix=["p16", "w128", "splits32-md"], window=_win(128),
                             num_splits=32, use_scheduler_metadata=True))
    out.append(make_scenario(f, "G9", "16q1s16k", suffix=["p16", "w4096", "splits32-md"], window=_win(4096),
                             num_splits=32, use_scheduler_metadata=True))
    return out


def _softcap() -> List[Scenario]:
    f = "softcap"
    out = []
    for heads in ["G9", "G27"]:
        for batch in ["2q4k", "64q1s4k", "q2k_32q1s2k"]:
            out.append(make_scenario(f, heads, batch, suffix=["p16", "sc50"], softcap=50.0))
    out.append(make_scenario(f, "G9", "q8k", suffix=["p16", "sc50", "w4096"], softcap=50.0, window=_win(4096)))
    out.append(make_scenario(f, "L8", "2q4k", suffix=["p16", "sc30"], softcap=30.0))
    return out


def _sinks() -> List[Scenario]:
    f = "sinks"
    w128 = _win(128)
    return [
        make_scenario(f, "OSS", "q8k", suffix=["p16", "sinks"], sinks=True),
        make_scenario(f, "OSS", "q8k", suffix=["p16", "sinks", "w128"], sinks=True, window=w128),
        make_scenario(f, "OSS", "64q1s8k", suffix=["p16", "sinks"], sinks=True),
        make_scenario(f, "OSS", "64q1s8k", suffix=["p16", "sinks", "w128"], sinks=True, window=w128),
        make_scenario(f, "OSSt8", "4q1s64k", suffix=["p16", "sinks", "splits32-md"], sinks=True, num_splits=32,
                      use_scheduler_metadata=True),
        make_scenario(f, "OSSt8", "16q1s16k", suffix=["p16", "sinks", "splits0"], sinks=True),
        make_scenario(f, "OSS", "q2k_32q1s2k", suffix=["p16", "sinks"], sinks=True),
        make_scenario(f, "OSSt8", "q2k_32q1s2k", suffix=["p16", "sinks", "w128"], sinks=True, window=w128),
        make_scenario(f, "OSS", "q1k", suffix=["p16", "sinks+8"], sinks=True, sink_value=8.0),
        make_scenario(f, "OSSt8", "64q1s4k", suffix=["p16", "sinks-8"], sinks=True, sink_value=-8.0),
    ]


def _kvcache() -> List[Scenario]:
    f = "kvcache"
    kw = dict(entry="kvcache")
    return [
        make_scenario(f, "L8", "16q1s2k", suffix=["batched", "leftpad"], kv_layout="batched", leftpad=True, **kw),
        make_scenario(f, "L8", "16q1s2k", suffix=["batched", "batch-idx"], kv_layout="batched",
                      cache_batch_idx=True, **kw),
        make_scenario(f, "L8", "16q4s2k", suffix=["batched", "append"], kv_layout="batched", append_new=True, **kw),
        make_scenario(f, "L8", "16q1s2k", suffix=["batched", "append", "rotary-interleaved"], kv_layout="batched",
                      append_new=True, rotary="interleaved", rotary_dim=64, **kw),
        make_scenario(f, "L8", "16q1s2k", suffix=["batched", "append", "rotary-neox"], kv_layout="batched",
                      append_new=True, rotary="neox", rotary_dim=128, **kw),
        make_scenario(f, "L8", "16q1s1k", suffix=["p1"], page_size=1, **kw),
        make_scenario(f, "L8", "16q1s1k", suffix=["p4"], page_size=4, **kw),
        make_scenario(f, "L8", "16q4s4k", suffix=["p128", "append"], page_size=128, append_new=True, **kw),
    ]


def _fp8() -> List[Scenario]:
    f = "fp8"
    kw = dict(dtype="e4m3")
    return [
        make_scenario(f, "L8", "q8k", suffix=["p16", "descale-random"], descale="random", **kw),
        make_scenario(f, "L8", "128q1s1k", suffix=["p16", "descale-stride0"], descale="stride0", **kw),
        make_scenario(f, "L8", "q2k_32q1s2k", suffix=["p16", "descale-stride0"], descale="stride0", **kw),
        make_scenario(f, "L70", "8q2k", suffix=["p16", "descale-random"], descale="random", **kw),
        make_scenario(f, "OSS", "q8k", suffix=["p16", "descale-random"], descale="random", **kw),
        make_scenario(f, "OSS", "64q1s4k", suffix=["p16", "descale-stride0"], descale="stride0", **kw),
        make_scenario(f, "OSS", "q8k", suffix=["p16", "w128"], descale="stride0", window=_win(128), **kw),
        make_scenario(f, "G9", "2q4k", suffix=["p16", "descale-random"], descale="random", **kw),
        make_scenario(f, "G9", "64q1s4k", suffix=["p16", "sc50"], descale="stride0", softcap=50.0, **kw),
        make_scenario(f, "G9", "2q4k", suffix=["p16", "sc50", "w4096"], descale="random", softcap=50.0,
                      window=_win(4096), **kw),
        make_scenario(f, "MLAp16", "q4k", suffix=["p16", "descale-random"], descale="random", **kw),
        make_scenario(f, "L8", "128q1s8k", suffix=["p16", "hnd"], descale="stride0", hnd=True, **kw),
        make_scenario(f, "L70t8", "q1s32k", suffix=["p16", "splits0"], descale="stride0", **kw),
        make_scenario(f, "L8", "q2k_32q1s2k", suffix=["p16", "w4096", "hnd"], descale="random", hnd=True,
                      window=_win(4096), **kw),
    ]


def _mla() -> List[Scenario]:
    f = "mla"
    out = []
    for heads in ["MLAp16", "MLAp128"]:
        for batch in ["q4k", "4q2k"]:
            out.append(make_scenario(f, heads, batch, kv_layout="varlen"))
    # a chunked-prefill context chunk: new queries against cached context keys, non-causal, LSE for the merge
    out.append(make_scenario(f, "MLAp128", "2q1ks4k", suffix=["context-chunk", "lse"], kv_layout="varlen",
                             causal=False, return_lse=True))
    dec = dict(q_v=True)
    for heads, page in [("MLAd16", 64), ("MLAd128", 128)]:
        for batch in ["64q1s4k", "128q1s8k", "32q1s32k"]:
            out.append(make_scenario(f, heads, batch, suffix=[f"p{page}"], page_size=page, **dec))
    # short prefills that the engine sends through the decode path
    out.append(make_scenario(f, "MLAd16", "16q8s2k", suffix=["p64", "short-prefill"], page_size=64, **dec))
    out.append(make_scenario(f, "MLAd128", "4q32s4k", suffix=["p128", "short-prefill"], page_size=128, **dec))
    for w in (2, 4, 8):
        out.append(make_scenario(f, "MLAd128", "64q1s32k", suffix=["p64", f"cp{w}"], page_size=64, q_v=True,
                                 cp_world_size=w, cp_rank=w - 1))
    return out


def _lse() -> List[Scenario]:
    f = "lse"
    casc = dict(entry="cascade", return_lse=False)
    out = [
        make_scenario(f, "L8", "64q1s2k", suffix=["p16", "cascade-p1k"], cascade_prefix=1024, **casc),
        make_scenario(f, "L8", "128q1s5k", suffix=["p16", "cascade-p4k"], cascade_prefix=4096, **casc),
        make_scenario(f, "L70t8", "32q4s1k", suffix=["p16", "cascade-p512"], cascade_prefix=512, **casc),
        make_scenario(f, "G9", "64q1s4k", suffix=["p16", "cascade-p2k", "sc50"], cascade_prefix=2048,
                      softcap=50.0, **casc),
    ]
    # vLLM's decode context parallel for GQA: each rank all-gathers the queries of W ranks' heads (Hq*W heads)
    # and attends to its own shard of the keys, non-causal, returning LSE for the cross-rank merge.
    for w in (2, 4, 8):
        h = custom_heads(8 * w, 1, 128)
        out.append(make_scenario(f, h, "64q1s2k", suffix=["p16", f"cp-gqa-W{w}"], causal=False, return_lse=True,
                                 name=f"lse/L70t8xW{w}/64q1s2k/p16/cp-gqa"))
    out.append(make_scenario(f, "L8", "q1ks4k", suffix=["p16", "chunked-prefill-lse"], return_lse=True))
    return out


def _edge() -> List[Scenario]:
    f = "edge"
    h40, h72, h80 = custom_heads(8, 2, 40), custom_heads(8, 2, 72), custom_heads(8, 2, 80)
    return [
        make_scenario(f, "L8", "q1s1000_q0s0_q0s37_q3s0_q1s1_q17s17", suffix=["p16", "zero-lengths"],
                      return_lse=True, note="zero-length q and KV entries; rows that see no key: 0 and LSE -inf"),
        make_scenario(f, "L8", "8q1s0", suffix=["p16", "total-k0"], return_lse=True, note="total_k = 0"),
        make_scenario(f, "L8", "32q1s1000", suffix=["p128", "nan-tail"], page_size=128,
                      note="NaN in the unused tail of partly filled 128-slot pages and in unused pages"),
        make_scenario(f, "L8", "q100s1000_16q1s77", suffix=["p256", "nan-tail"], page_size=256,
                      note="NaN in the unused tail of partly filled 256-slot pages and in unused pages"),
        make_scenario(f, h40, "32q1s1k_q300s700", suffix=["p1"], page_size=1),
        make_scenario(f, h72, "q257s1k_16q1s600", suffix=["p48"], page_size=48),
        make_scenario(f, h80, "q100s300_32q1s1000", suffix=["p16"]),
        make_scenario(f, "L8", "128q1s2k", suffix=["p16", "hnd"], hnd=True),
        make_scenario(f, "L8", "q200s1k_32q1s1k", suffix=["p16", "q-stride", "bt-stride"], q_row_pad=2 * 8 * 128,
                      block_table_pad=7, note="q and out are views of wider rows; block_table row stride > width"),
        make_scenario(f, "L8", "q300s100_q64s8", suffix=["p16", "sq-gt-sk"], return_lse=True,
                      note="causal with Sq > Sk: the first Sq - Sk rows see no key"),
        make_scenario(f, "L8", "1200q1s512", suffix=["p16", "over-992"], note="more than 992 sequences"),
        make_scenario(f, "L70t8", "64q1s8k", suffix=["p16", "blocks32768"], num_blocks=32768,
                      note="a 32768-block cache: 64-bit page offsets"),
    ]


def performance_grid() -> List[Scenario]:
    """Section 1 of grid.md: every family, exactly the listed configurations (199 scenarios)."""
    out: List[Scenario] = []
    for build in (_prefill_dense, _prefill_varlen, _decode_paged, _decode_splitkv, _spec_decode, _mixed,
                  _sliding_window, _softcap, _sinks, _kvcache, _fp8, _mla, _lse, _edge, _small_decode):
        out.extend(build())
    _check_unique(out)
    return out


# --------------------------------------------------------------------------------------------------------------
# Section 2: the operator test grid (mirrors vLLM's tests/kernels/attention/test_flash_attn.py and
# test_cascade_flash_attn.py)

OPERATOR_SEQS = {
    "S1": ((1, 1328), (5, 18), (129, 463)),
    "S2": ((1, 523), (1, 37), (1, 2011)),
    "K1": ((1, 1328), (1, 18), (1, 463)),
    "K2": ((1, 1), (1, 54), (1, 293), (1, 70)),
}
CASCADE_SEQS = {
    "C1": ((129, 871), (18, 280), (37, 988), (1023, 2304), (1, 257)),
    "C400": ((1, 1023), (1, 879), (1, 778), (1, 1777)) * 100,
}


def operator_grid() -> List[Scenario]:
    """Section 2 of grid.md: 54 cases. Random block tables whose pages may repeat; `out` given in every other
    case (by position in the list, so names stay stable)."""
    cases: List[Tuple[str, str, Heads, int, Dict]] = []  # (group, seqs key, heads, num_blocks, fields)

    def add(group, skey, heads, num_blocks=32768, **kw):
        cases.append((group, skey, heads, num_blocks, kw))

    for skey in ("S1", "S2"):
        for hq, hkv in ((4, 4), (8, 2)):
            for d in (40, 72, 80, 128, 256):
                add("core", skey, custom_heads(hq, hkv, d))
    for skey in ("S1", "S2"):
        for d in (40, 72, 80, 128, 256):
            add("sliding256", skey, custom_heads(8, 2, d), 2048, window=_win(256))
    for skey in ("S1", "S2"):
        for d in (80, 128, 256):
            kw = dict(softcap=50.0)
            if d == 128:  # "two also with window 256"
                kw["window"] = _win(256)
            add("softcap50", skey, custom_heads(4, 4, d), **kw)
    fp8 = dict(dtype="e4m3", descale="ones")
    for skey in ("S1", "S2"):
        for d in (80, 128, 256):
            add("fp8", skey, custom_heads(8, 2, d), **fp8)
    add("fp8", "S1", custom_heads(8, 2, 40), **fp8)
    add("fp8", "S2", custom_heads(8, 2, 72), **fp8)
    base = custom_heads(8, 2, 128)
    add("breadth", "S1", base, dtype="fp16")
    add("breadth", "S1", base, page_size=32)
    add("breadth", "S1", custom_heads(16, 2, 128))
    add("breadth", "S1", base, softcap=10.0)
    for skey in ("K1", "K2"):
        for d in (128, 256):
            add("decode", skey, custom_heads(16, 2, d), use_scheduler_metadata=True)

    out: List[Scenario] = []
    for i, (group, skey, heads, num_blocks, kw) in enumerate(cases):
        out_given = i % 2 == 0
        parts = ["operator", group, skey, heads.label, f"b{num_blocks}"]
        if kw.get("dtype", "bf16") != "bf16":
            parts.append(kw["dtype"])
        if kw.get("page_size", 16) != 16:
            parts.append(f"p{kw['page_size']}")
        if kw.get("softcap"):
            parts.append(f"sc{kw['softcap']:g}")
        if kw.get("window", (-1, -1)) != (-1, -1):
            parts.append(f"w{kw['window'][0] + 1}")
        if kw.get("use_scheduler_metadata"):
            parts.append("md")
        parts.append("out" if out_given else "noout")
        out.append(make_scenario(OPERATOR_FAMILY, heads, OPERATOR_SEQS[skey], label=skey, name="/".join(parts),
                                 num_blocks=num_blocks, block_table_repeats=True, out_given=out_given, **kw))
    # cascade: shared prefix 256 (a general batch) and 512 (400 decodes), against one plain call at 1e-2
    out.append(make_scenario(OPERATOR_FAMILY, custom_heads(8, 2, 128), CASCADE_SEQS["C1"], label="C1",
                             name="operator/cascade/C1/8-2-d128/b2048/prefix256/out", entry="cascade",
                             cascade_prefix=256, num_blocks=2048, block_table_repeats=True))
    out.append(make_scenario(OPERATOR_FAMILY, custom_heads(8, 2, 192), CASCADE_SEQS["C400"], label="C400",
                             name="operator/cascade/C400/8-2-d192/b2048/prefix512/sc50/noout", entry="cascade",
                             cascade_prefix=512, num_blocks=2048, block_table_repeats=True, softcap=50.0,
                             out_given=False))
    _check_unique(out)
    return out


# --------------------------------------------------------------------------------------------------------------
# Selection


def _check_unique(scenarios: Iterable[Scenario]) -> None:
    seen = set()
    for s in scenarios:
        if s.name in seen:
            raise AssertionError(f"duplicate scenario name {s.name!r}")
        seen.add(s.name)


def grid(which: str = "all") -> List[Scenario]:
    """'perf' (section 1), 'operator' (section 2) or 'all'."""
    if which == "perf":
        return performance_grid()
    if which == "operator":
        return operator_grid()
    if which == "all":
        return performance_grid() + operator_grid()
    raise ValueError(f"grid: unknown {which!r}; valid: perf, operator, all")


def select(scenarios: Sequence[Scenario], families: Optional[Sequence[str]] = None,
           name_filter: Optional[str] = None) -> List[Scenario]:
    """Scenarios of the given families whose name contains name_filter (a substring, or a regex when it is not
    found as a substring of any name). Unknown family -> ValueError listing the valid ones."""
    if families:
        unknown = [f for f in families if f not in ALL_FAMILIES]
        if unknown:
            raise ValueError(f"unknown family {', '.join(unknown)}; valid families: {', '.join(ALL_FAMILIES)}")
        scenarios = [s for s in scenarios if s.family in families]
    if name_filter:
        if any(name_filter in s.name for s in scenarios):
            scenarios = [s for s in scenarios if name_filter in s.name]
        else:
            try:
                pattern = re.compile(name_filter)
            except re.error as exc:
                raise ValueError(f"--filter {name_filter!r}: not found as a substring and not a regex ({exc})")
            scenarios = [s for s in scenarios if pattern.search(s.name)]
    return list(scenarios)


def count_by_family(scenarios: Iterable[Scenario]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for s in scenarios:
        counts[s.family] = counts.get(s.family, 0) + 1
    return counts


# A subset that runs in under 2 minutes: one or two representatives of each family, no 32k prefills.
QUICK_NAMES = (
    "prefill-dense/L8/q8k", "prefill-dense/OSS/8q2k",
    "prefill-varlen/L8/q257_q1k_q63_q4093", "prefill-varlen/VIT72/16q729/noncausal",
    "decode-paged/L8/128q1s8k/p16", "decode-paged/L70t8/8q1s1k/p16", "decode-paged/OSSt8/512q1s2k/p16",
    "decode-splitkv/L70t8/q1s128k/p16/splits0", "decode-splitkv/L8/4q1s64k/p16/splits32-md",
    "spec-decode/L8/32q4s2k/p16", "mixed/L8/q2k_32q1s2k/p16", "mixed/L70t4/q8k_512q1s1k/p16",
    "sliding-window/OSS/64q1s8k/p16/w128", "sliding-window/G9/q8k/p16/w4096",
    "softcap/G9/2q4k/p16/sc50", "softcap/G27/64q1s4k/p16/sc50",
    "sinks/OSS/q8k/p16/sinks", "sinks/OSSt8/4q1s64k/p16/sinks/splits32-md",
    "kvcache/L8/16q4s2k/batched/append", "kvcache/L8/16q1s1k/p4",
    "fp8/L8/128q1s1k/p16/descale-stride0", "mla/MLAp16/q4k", "mla/MLAd16/64q1s4k/p64",
    "lse/L8/64q1s2k/p16/cascade-p1k", "lse/L70t8xW4/64q1s2k/p16/cp-gqa",
    "edge/L8/q1s1000_q0s0_q0s37_q3s0_q1s1_q17s17/p16/zero-lengths", "edge/L8/128q1s2k/p16/hnd",
    "small-decode/L8/q1s1k/p16",
)


def quick_subset(scenarios: Sequence[Scenario]) -> List[Scenario]:
    """QUICK_NAMES among the given scenarios, plus every fourth operator-grid case."""
    names = set(QUICK_NAMES)
    ops = [s for s in scenarios if s.family == OPERATOR_FAMILY]
    return [s for s in scenarios if s.name in names] + ops[::4]
