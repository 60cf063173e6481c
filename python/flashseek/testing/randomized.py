"""Small random scenarios for every family of grid.md section 1 (except fp8 and mla, which the library rejects
today). Sizes are small enough that a GPU test takes well under a second, and odd on purpose (lengths that are not
multiples of anything, pages of 1 to 256 slots, head dims 40 to 256).

Deterministic in (seed, family, index): the GPU tests print the seed, and FLASHSEEK_TEST_SEED replays it.
"""

from __future__ import annotations

import random
from typing import List, Sequence, Tuple

from flashseek.testing.grid import Heads, Scenario, custom_heads, make_scenario

RANDOM_FAMILIES: Tuple[str, ...] = (
    "prefill-dense", "prefill-varlen", "decode-paged", "decode-splitkv", "spec-decode", "mixed",
    "sliding-window", "softcap", "sinks", "kvcache", "lse", "edge",
)

_HEADS = [(4, 4, 64), (8, 2, 128), (8, 1, 128), (16, 2, 64), (6, 2, 96), (4, 1, 256), (8, 8, 40), (4, 2, 72),
          (4, 2, 80), (12, 4, 128), (16, 8, 256)]
_PAGES = [16, 16, 16, 32, 64, 128, 256]


def _heads(r: random.Random, dims: Sequence[int] = ()) -> Heads:
    choices = [h for h in _HEADS if not dims or h[2] in dims]
    return custom_heads(*r.choice(choices))


def _common(r: random.Random) -> dict:
    return dict(dtype="fp16" if r.random() < 0.2 else "bf16", out_given=r.random() < 0.5,
                return_lse=r.random() < 0.5)


def _decodes(r: random.Random, n: int, kmax: int = 3000, qmax: int = 1) -> List[Tuple[int, int]]:
    out = []
    for _ in range(n):
        q = r.randint(1, qmax)
        out.append((q, r.randint(q, kmax)))
    return out


def _prefills(r: random.Random, n: int, qmax: int = 500, context: int = 1500) -> List[Tuple[int, int]]:
    out = []
    for _ in range(n):
        q = r.randint(17, qmax)
        out.append((q, q + (r.randint(0, context) if r.random() < 0.6 else 0)))
    return out


def _mixed_batch(r: random.Random) -> List[Tuple[int, int]]:
    seqs = _prefills(r, r.randint(1, 2)) + _decodes(r, r.randint(1, 40), qmax=r.choice([1, 1, 4]))
    r.shuffle(seqs)
    return seqs


def _any_batch(r: random.Random) -> List[Tuple[int, int]]:
    kind = r.choice(["prefill", "decode", "mixed"])
    if kind == "prefill":
        return _prefills(r, r.randint(1, 3))
    if kind == "decode":
        return _decodes(r, r.randint(1, 40))
    return _mixed_batch(r)


def _label(seqs) -> str:
    qs, ks = [q for q, _ in seqs], [k for _, k in seqs]
    return f"B{len(seqs)}-q{max(qs)}-k{max(ks)}"


def random_scenario(family: str, seed: int, index: int) -> Scenario:
    r = random.Random(f"{seed}/{family}/{index}")
    kw = _common(r)
    h = _heads(r)
    paged = dict(page_size=r.choice(_PAGES))
    feats: List[str] = []

    if family == "prefill-dense":
        n, L = r.randint(1, 4), r.randint(1, 600)
        seqs = [(L, L)] * n
        kw.update(kv_layout="varlen")
    elif family == "prefill-varlen":
        seqs = [(q, q + (r.randint(0, 300) if r.random() < 0.3 else 0)) for q in
                (r.randint(1, 700) for _ in range(r.randint(1, 5)))]
        layout = r.choice(["varlen", "varlen", "batched"])
        kw.update(kv_layout=layout, kv_gap=r.randint(1, 50) if layout == "batched" else 0, causal=r.random() < 0.5)
        if not kw["causal"] and r.random() < 0.5:
            w = r.randint(1, 300)
            kw["window"] = (w, r.choice([w, r.randint(0, 300)]))
        feats.append(layout)
    elif family == "decode-paged":
        seqs = _decodes(r, r.randint(1, 48))
        kw.update(paged)
    elif family == "decode-splitkv":
        seqs = _decodes(r, r.randint(1, 4), kmax=20000)
        seqs = [(1, max(k, 1000)) for _, k in seqs]
        kw.update(paged, num_splits=r.choice([0, 2, 7, 32, 128]), use_scheduler_metadata=r.random() < 0.5)
        feats.append(f"splits{kw['num_splits']}")
    elif family == "spec-decode":
        seqs = _decodes(r, r.randint(1, 32), qmax=16)
        kw.update(paged)
    elif family == "mixed":
        seqs = _mixed_batch(r)
        kw.update(paged)
    elif family == "sliding-window":
        seqs = _any_batch(r)
        w = r.randint(1, 600) if r.random() < 0.8 else 100000  # sometimes longer than every sequence
        kw.update(paged, window=(w - 1, 0), num_splits=r.choice([0, 0, 1, 8]))
        feats.append(f"w{w}")
    elif family == "softcap":
        seqs = _any_batch(r)
        kw.update(paged, softcap=r.choice([5.0, 30.0, 50.0]))
        if r.random() < 0.3:
            kw["window"] = (r.randint(0, 400), 0)
        feats.append(f"sc{kw['softcap']:g}")
    elif family == "sinks":
        h = _heads(r, dims=(64, 128))
        seqs = _any_batch(r)
        kw.update(paged, sinks=True, sink_value=r.choice([None, None, 8.0, -8.0]),
                  num_splits=r.choice([0, 0, 1, 8]))
        if r.random() < 0.4:
            kw["window"] = (r.randint(0, 200), 0)
        feats.append("sinks")
    elif family == "kvcache":
        return _random_kvcache(r, h, seed, index, kw)
    elif family == "lse":
        if r.random() < 0.5:
            page = r.choice([16, 32])
            prefix = page * r.randint(1, 8)
            seqs = [(q, prefix + r.randint(q, 600)) for q in (r.choice([1, 1, 3, 17]) for _ in range(r.randint(1, 12)))]
            kw.update(entry="cascade", cascade_prefix=prefix, page_size=page, return_lse=False,
                      softcap=r.choice([0.0, 0.0, 50.0]))
            feats.append(f"cascade{prefix}")
        else:
            seqs = _any_batch(r)
            kw.update(paged, return_lse=True, causal=r.random() < 0.5)
    elif family == "edge":
        return _random_edge(r, h, seed, index, kw)
    else:
        raise ValueError(f"random_scenario: no generator for family {family!r}; valid: {', '.join(RANDOM_FAMILIES)}")
    name = "/".join(["random", family, str(index), h.label, _label(seqs), *feats, f"seed{seed}"])
    return make_scenario(family, h, seqs, name=name, **kw)


def _random_kvcache(r: random.Random, h: Heads, seed: int, index: int, kw: dict) -> Scenario:
    b, q = r.randint(1, 8), r.choice([1, 1, 2, 4])
    seqs = [(q, r.randint(q, 1500)) for _ in range(b)]
    kw.update(entry="kvcache", out_given=False, causal=r.random() < 0.8)
    feats = []
    if r.random() < 0.5:
        kw.update(kv_layout="batched", leftpad=r.random() < 0.5, cache_batch_idx=r.random() < 0.5)
        feats += [f for f in ("leftpad", "cache_batch_idx") if kw[f]] or ["batched"]
    else:
        kw.update(page_size=r.choice([1, 4, 16, 128]))
        feats.append(f"p{kw['page_size']}")
    if r.random() < 0.6:
        kw["append_new"] = True
        feats.append("append")
        if r.random() < 0.6:
            kw["rotary"] = r.choice(["interleaved", "neox"])
            kw["rotary_dim"] = r.choice([h.head_dim // 2 // 2 * 2, h.head_dim])
            feats.append(f"rotary-{kw['rotary']}{kw['rotary_dim']}")
    if r.random() < 0.2:
        kw["window"] = (r.randint(0, 300), 0 if kw["causal"] else r.randint(0, 300))
    name = "/".join(["random", "kvcache", str(index), h.label, _label(seqs), *feats, f"seed{seed}"])
    return make_scenario("kvcache", h, seqs, name=name, **kw)


def _random_edge(r: random.Random, h: Heads, seed: int, index: int, kw: dict) -> Scenario:
    case = r.choice(["zero-lengths", "sq-gt-sk", "hnd", "strides", "page1", "page48", "total-k0", "over-992"])
    seqs = _mixed_batch(r)
    if case == "zero-lengths":
        seqs += [(0, 0), (0, r.randint(1, 100)), (r.randint(1, 5), 0)]
        r.shuffle(seqs)
        kw["return_lse"] = True
    elif case == "sq-gt-sk":
        seqs = [(q, r.randint(0, q - 1)) for q in (r.randint(2, 300) for _ in range(r.randint(1, 4)))]
        kw["return_lse"] = True
    elif case == "hnd":
        kw["hnd"] = True
    elif case == "strides":
        kw.update(q_row_pad=r.choice([8, 2 * h.num_heads_kv * h.head_dim]), block_table_pad=r.randint(1, 9))
    elif case == "page1":
        kw["page_size"] = 1
    elif case == "page48":
        kw["page_size"] = 48
    elif case == "total-k0":
        seqs = [(1, 0)] * r.randint(1, 8)
        kw["return_lse"] = True
    elif case == "over-992":
        seqs = _decodes(r, r.randint(993, 1300), kmax=64)
    name = "/".join(["random", "edge", str(index), h.label, _label(seqs), case, f"seed{seed}"])
    return make_scenario("edge", h, seqs, name=name, **kw)


def random_scenarios(seed: int, per_family: int = 4, families: Sequence[str] = RANDOM_FAMILIES) -> List[Scenario]:
    return [random_scenario(f, seed, i) for f in families for i in range(per_family)]
