"""fp8 (e4m3): the fp8 family of grid.md section 1, a bf16/fp16 query against an e4m3 cache, descales as vLLM
passes them (random (B, Hkv), stride-0 broadcasts, size-1 dims), padded head dims, splits, sinks, softcap,
windows, flash_attn_with_kvcache with an fp8 cache, random fp8 cases from the session seed, and the same token
giving the same result in a prefill chunk and in a decode step. Every case is judged by FA3's fp8 rule (4x max,
3x mean of naive_fp8's error against the fp32 reference on the dequantized values) and vLLM's 0.15 / 0.15 against
the unquantized values (flashseek.testing.tolerance). The 8 fp8 cases of the operator grid run in
test_operator_grid.py.

Producer variants (FLASHSEEK_EXPERIMENT, read once per process): the module runs in-process with whatever
FLASHSEEK_EXPERIMENT is set, and test_fp8_under_experiment re-runs the whole module in a subprocess for each value in
FLASHSEEK_TEST_FP8_EXPERIMENTS (comma-separated list of values, tokens inside a value joined by "+"; default
"fp8-convert,fp8-convert+fp8-cp8,tma-one-warp,tma-warps=4,fp8-cpasync,no-fp8-m192,fp8-headpack,fp8-headpack2,
no-fp8-producer-ahead,no-fp8-f16pv": e4m3 q/k/v on the converting tiles (the default takes the native e4m3 tiles at d 64, 128 and 256), those with the
8-byte copy path the default leaves for unaligned rows, the native tiles with one and four warps issuing K's and
V's boxes (the default: two), the native tiles taking K and V by 16-byte copies in every call, long d64 tiles on
the 128-row native tile, decodes on the head-packed tiles (one and two CTAs per SM), and the decode tiles with
the loop before entry 39 (page ids read one block ahead, transpose loads one pass at a time), and the d64 and d128
native tiles with P as two e4m3 terms against a transposed V (before entries 78 and 79);
"none" skips),
with the same seed. Not in the list: the native tiles with P as one e4m3 term as FA3 (fp8-native-1p), which miss
vLLM's rule on a few cases (docs/perf-log.md entry 19). One value by hand:
    FLASHSEEK_EXPERIMENT=fp8-convert python -m pytest tests/gpu/test_fp8.py -q
The diagnostic tokens fp8-nocvt / fp8-nocopy give wrong results by design and are not tested."""

import os
import random
import importlib.util
import subprocess
import sys
from pathlib import Path

from gpu_support import assert_passes, experiment_on_top, require_kernels, session_seed

require_kernels()

# Where pytest-timeout is installed, a case of a rerun module fails after 120 s instead of a hung kernel holding
# the GPU run.
_CASE_TIMEOUT = (["--timeout=120", "--timeout-method=thread"]
                 if importlib.util.find_spec("pytest_timeout") else [])

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import custom_heads, make_scenario, performance_grid, select  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

FP8 = torch.float8_e4m3fn
FAMILY = select(performance_grid(), families=["fp8"])
assert len(FAMILY) == 14, len(FAMILY)


@pytest.mark.parametrize("scenario", FAMILY, ids=[s.name for s in FAMILY])
def test_fp8_family(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


def _sc(heads, batch, name, **kw):
    kw.setdefault("dtype", "e4m3")
    kw.setdefault("descale", "random")
    return make_scenario("fp8", heads, batch, suffix=[name], **kw)


H = custom_heads(8, 2, 128)
EXTRA = [
    # a 16-bit query against an e4m3 cache (dequantized in the kernel), both compute types, every padded head dim
    _sc("L8", "q300s1k_16q1s700", "bf16q-paged", dtype="bf16", kv_dtype="e4m3", return_lse=True),
    _sc(custom_heads(8, 2, 64), "q200_q57", "bf16q-varlen", dtype="bf16", kv_dtype="e4m3", kv_layout="varlen"),
    _sc(custom_heads(4, 2, 256), "q129s463_8q1s1328", "bf16q-d256", dtype="bf16", kv_dtype="e4m3"),
    _sc("MLAp16", "q300_q77", "bf16q-d192x128", dtype="bf16", kv_dtype="e4m3", kv_layout="varlen"),
    _sc(custom_heads(8, 8, 192), "q150s600_4q1s900", "bf16q-d192", dtype="bf16", kv_dtype="e4m3"),
    _sc(H, "q300s1k_16q1s700", "fp16q", dtype="fp16", kv_dtype="e4m3", descale="stride0", return_lse=True),
    _sc(H, "32q1s3000", "bf16q-splits32-md", dtype="bf16", kv_dtype="e4m3", num_splits=32,
        use_scheduler_metadata=True, return_lse=True),
    _sc(H, "q200s900_8q1s2000", "bf16q-softcap-window", dtype="bf16", kv_dtype="e4m3", softcap=30.0,
        window=(255, 0)),
    # e4m3 q/k/v
    _sc(H, "q300s1k_8q1s500", "stride0", descale="stride0", return_lse=True),
    _sc("OSSt8", "8q1s500", "hnd-random", hnd=True),
    _sc(custom_heads(8, 2, 40), "q129s463_q5s18_q1s1328", "d40", page_size=1),
    _sc(custom_heads(8, 2, 72), "q257s1000_16q1s600", "d72", page_size=48),
    _sc(custom_heads(8, 2, 80), "q100s300_32q1s1000", "d80"),
    _sc(custom_heads(6, 2, 96), "q300_q33", "d96-varlen", kv_layout="varlen", causal=False),
    _sc(custom_heads(16, 8, 256), "q600s600", "d256-prefill", kv_layout="varlen"),
    _sc(custom_heads(8, 8, 192), "q700_q130", "d192-prefill", kv_layout="varlen", return_lse=True),
    _sc("L70t8", "4q1s20000", "splits0", num_splits=0, return_lse=True),
    _sc("L70t8", "4q1s20000", "splits32-md", num_splits=32, use_scheduler_metadata=True),
    _sc("OSS", "q400s1000_16q1s777", "sinks", sinks=True, return_lse=True),
    _sc("OSSt8", "4q1s9000", "sinks-splits", sinks=True, num_splits=16, return_lse=True),
    _sc("G9", "q300s1k_8q1s900", "softcap50-window", softcap=50.0, window=(255, 0)),
    _sc(H, "q300s100_q64s8", "sq-gt-sk", return_lse=True),
    _sc(H, "q1s1000_q0s0_q0s37_q3s0_q1s1_q17s17", "zero-lengths", return_lse=True),
    _sc(H, "q200s1k_32q1s1k", "q-stride-bt-stride", q_row_pad=2 * 8 * 128, block_table_pad=7),
    _sc(H, "16q1s2k", "batched-gaps", kv_layout="batched", kv_gap=61),
    _sc(H, "q2k_16q1s3k", "noout", out_given=False, descale="ones"),
    # the native two-CTA decode tile (256 CTAs >= 1.5 waves, no split; a last block of 28 keys); the same grid where
    # the native tiles refuse the call (q rows 8 bytes off 16-byte alignment: the converting tile runs it) and where
    # no TMA box fits (1-token pages, 4-token pages: K and V by copies; the d256 128-row tile has no copy path and
    # gives those calls to the converting tile)
    _sc("L8", "32q1s1500", "two-cta-decode", return_lse=True),
    _sc("L8", "32q1s1500", "two-cta-batched", kv_layout="batched", kv_gap=37, descale="stride0"),
    _sc("L8", "32q1s1500", "two-cta-fallback-q-stride", q_row_pad=8),
    _sc("L8", "32q1s1500", "two-cta-page1-copies", page_size=1),
    _sc(custom_heads(16, 2, 256), "q300s900_4q1s700", "d256-page4", page_size=4, return_lse=True),
    _sc(custom_heads(8, 1, 64), "q257s1000_16q1s600", "d64-page4-copies", page_size=4),
    # for the head-packed decode tiles (fp8-headpack, fp8-headpack2: several KV heads per CTA, block-diagonal S;
    # tile_table.h kFp8NativeHeadPackTiles): 8 heads of L8 and of gpt-oss d64, a last block of 12 keys, splits, speculative
    # tokens (4 heads), windows, sinks, softcap, HND, other page sizes and layouts, sequences of 0-37 keys; per-head
    # descales and 4-token pages take the one-head tile instead
    _sc("L8", "64q1s1500", "headpack-decode", descale="stride0", return_lse=True),
    _sc("L8", "4q1s9000", "headpack-splits", descale="stride0", return_lse=True),
    _sc("L8", "16q4s2000", "headpack-spec", descale="stride0", return_lse=True),
    _sc("L8", "32q1s3000", "headpack-window-softcap", descale="stride0", window=(500, 0), softcap=30.0),
    _sc("OSS", "32q1s1000", "headpack-d64-sinks", descale="stride0", sinks=True, return_lse=True),
    _sc("OSS", "2q1s5000", "headpack-d64-sinks-splits", descale="ones", sinks=True, return_lse=True),
    _sc("L8", "32q1s1000", "headpack-hnd", descale="stride0", hnd=True),
    _sc("L8", "32q1s1000", "headpack-page64", descale="stride0", page_size=64),
    _sc("L8", "32q1s1000", "headpack-page8", descale="stride0", page_size=8),
    _sc("L8", "16q1s2k", "headpack-batched", kv_layout="batched", kv_gap=61, descale="stride0"),
    _sc("L8", "16q1s2k", "headpack-varlen-kv", kv_layout="varlen", descale="stride0"),
    _sc(H, "q1s1000_q1s0_q1s1_q1s37_q1s16", "headpack-short", descale="stride0", return_lse=True),
    _sc("L8", "32q1s1500", "headpack-per-head-descale"),
    _sc("L8", "32q1s1500", "headpack-page4", descale="stride0", page_size=4),
    # e4m3 q/k/v at d192 / 128 (MLA prefill; the native tiles' three 64-byte-swizzled column blocks)
    _sc("MLAp16", "q300_q77", "d192x128-varlen", kv_layout="varlen", return_lse=True),
    _sc("MLAp16", "q200s900_16q1s700", "d192x128-paged", causal=True),
    _sc("MLAp16", "8q1s3000", "d192x128-splits", num_splits=8, return_lse=True),
    _sc(custom_heads(16, 2, 192, 128), "q129s463_q5s18_q1s1328", "d192x128-gqa-page1", page_size=1),
    # a long d64 prefill the native tiles refuse (q rows off 16-byte alignment): the plan's 192-row
    # grid is counted again for the converting 128-row tile
    _sc(custom_heads(8, 1, 64), "q3000", "d64-long-q-stride", q_row_pad=8),
]


@pytest.mark.parametrize("scenario", EXTRA, ids=[s.name for s in EXTRA])
def test_fp8_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


def _random_fp8(seed: int, index: int):
    r = random.Random(f"{seed}/fp8/{index}")
    hq, hkv, d = r.choice([(4, 4, 64), (8, 2, 128), (8, 1, 128), (16, 2, 64), (6, 2, 96), (4, 1, 256), (8, 8, 40),
                           (4, 2, 72), (4, 2, 80), (12, 4, 128), (16, 8, 256), (8, 8, 192)])
    n_dec, n_pre = r.randint(0, 24), r.randint(0, 2)
    seqs = [(1 if r.random() < 0.8 else r.randint(2, 8), r.randint(1, 4000)) for _ in range(n_dec)]
    seqs = [(q, max(q, k)) for q, k in seqs]
    for _ in range(n_pre if n_dec else max(1, n_pre)):
        q = r.randint(17, 600)
        seqs.append((q, q + (r.randint(0, 1500) if r.random() < 0.6 else 0)))
    r.shuffle(seqs)
    kinds = [("e4m3", None), ("e4m3", None), ("bf16", "e4m3"), ("fp16", "e4m3")]
    dtype, kv_dtype = r.choice(kinds)
    kw = dict(dtype=dtype, kv_dtype=kv_dtype, descale=r.choice(["random", "stride0", "ones"]),
              page_size=r.choice([16, 16, 32, 64, 128, 1, 48]), out_given=r.random() < 0.5,
              return_lse=r.random() < 0.5, hnd=r.random() < 0.2)
    feats = []
    if r.random() < 0.3:
        kw["window"] = (r.randint(16, 1024), 0)
        feats.append("window")
    if r.random() < 0.2:
        kw["softcap"] = r.choice([10.0, 30.0, 50.0])
        feats.append("softcap")
    if r.random() < 0.2 and d <= 256:
        kw["sinks"] = True
        feats.append("sinks")
    if r.random() < 0.3:
        kw["num_splits"] = r.choice([2, 8, 32])
        feats.append("splits")
    label = f"B{len(seqs)}-q{max(q for q, _ in seqs)}-k{max(k for _, k in seqs)}"
    name = "/".join(["fp8-random", f"{hq}-{hkv}-d{d}", label, f"{dtype}-{kv_dtype or dtype}", str(index)] + feats)
    return make_scenario("fp8", custom_heads(hq, hkv, d), seqs, label=label, name=name, **kw)


RANDOM = [_random_fp8(session_seed(), i) for i in range(6)]


@pytest.mark.parametrize("scenario", RANDOM, ids=[s.name for s in RANDOM])
def test_fp8_random_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


# ---- descales as views -------------------------------------------------------------------------------------

def _call(inputs, **override):
    kw = dict(inputs.kwargs)
    kw["out"] = None
    kw.update(override)
    out = flashseek.flash_attn_varlen_func(**kw)
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("dtype,kv_dtype", [("e4m3", None), ("bf16", "e4m3")])
def test_broadcast_descale_views_give_the_same_result(dtype, kv_dtype):
    """A scalar descale as a contiguous (B, Hkv) tensor, a stride-0 expand of it, and (1, 1) / (B, 1) / (1, Hkv)
    tensors all give bitwise the same output."""
    s = _sc(H, "q100s400_8q1s300", "views", dtype=dtype, kv_dtype=kv_dtype, descale="ones")
    inputs = make_inputs(s, "cuda", seed=session_seed())
    b, hkv = s.batch_size, s.num_heads_kv
    dev = inputs.device
    c = {"q_descale": 0.75, "k_descale": 1.25, "v_descale": 1.5}
    full = {n: torch.full((b, hkv), v, device=dev) for n, v in c.items()}
    base = _call(inputs, **full)
    assert torch.isfinite(base.float()).all()
    variants = [
        {n: torch.tensor([v], device=dev).expand(b, hkv) for n, v in c.items()},  # vLLM's stride-0 view
        {n: torch.full((1, 1), v, device=dev) for n, v in c.items()},
        {n: torch.full((b, 1), v, device=dev) for n, v in c.items()},
        {n: torch.full((1, hkv), v, device=dev) for n, v in c.items()},
        {n: torch.full((hkv, b), v, device=dev).t() for n, v in c.items()},  # transposed strides
    ]
    for i, kw in enumerate(variants):
        got = _call(inputs, **kw)
        assert torch.equal(got.view(torch.int16), base.view(torch.int16)), f"variant {i} differs"


def test_descales_take_effect_per_sequence_and_kv_head():
    """Scaling k_descale of one (sequence, KV head) changes only that sequence's rows of that head group, and
    v_descale scales O linearly."""
    s = _sc(H, "3q1s500", "per-head", descale="ones")
    inputs = make_inputs(s, "cuda", seed=session_seed())
    b, hkv, g = s.batch_size, s.num_heads_kv, s.num_heads_q // s.num_heads_kv
    ones = torch.ones(b, hkv, device=inputs.device)
    base = _call(inputs, q_descale=ones, k_descale=ones, v_descale=ones).float()
    kd = ones.clone()
    kd[1, 1] = 3.0
    out = _call(inputs, q_descale=ones, k_descale=kd, v_descale=ones).float()
    changed = (out != base).any(dim=-1)  # (tokens, Hq)
    expect = torch.zeros_like(changed)
    expect[1, g:2 * g] = True
    assert torch.equal(changed, expect)
    vd = ones * 2.0
    out = _call(inputs, q_descale=ones, k_descale=ones, v_descale=vd).float()
    torch.testing.assert_close(out, 2 * base, atol=2e-2, rtol=1e-2)


# ---- the same token in a prefill chunk and in a decode step ------------------------------------------------

@pytest.mark.parametrize("dtype,kv_dtype,heads,page_size", [
    ("e4m3", None, custom_heads(8, 2, 128), 16),
    ("e4m3", None, custom_heads(16, 2, 256), 16),
    ("e4m3", None, custom_heads(8, 1, 64), 16),
    ("bf16", "e4m3", custom_heads(8, 2, 128), 16),
    ("e4m3", None, custom_heads(16, 16, 192, 128), 16),
    # pages of 4 rows: no TMA box fits, so the native tiles copy K and V where all tiles of the head dim can
    # (d128) and both kernels take the converting tiles where one cannot (d256's 128-row tile)
    ("e4m3", None, custom_heads(8, 2, 128), 4),
    ("e4m3", None, custom_heads(16, 2, 256), 4),
])
def test_same_token_same_result_in_prefill_chunk_and_decode_step(dtype, kv_dtype, heads, page_size):
    """A chunk of P new tokens at the end of a K-key sequence (chunked prefill: the 128-row prefill kernel) and
    the same tokens sent one by one as decode steps against their own prefixes of the same paged cache (the
    64-row decode kernel, one sequence per token) give bitwise the same output rows: fp8 values are converted
    exactly and descaled by per-(sequence, KV head) scalars, never quantized per call. num_splits=1 (the
    batch-invariant mode); with the default heuristic both stay within the fp8 rules (checked elsewhere)."""
    P, K = 200, 1500
    s = make_scenario("fp8", heads, ((P, K),), label=f"q{P}s{K}", name=f"fp8/same-token/{heads.label}",
                      dtype=dtype, kv_dtype=kv_dtype, descale="random", num_splits=1, page_size=page_size)
    inputs = make_inputs(s, "cuda", seed=session_seed())
    prefill = _call(inputs)
    kw = dict(inputs.kwargs)
    dev = inputs.device
    tokens = list(range(0, P, 7)) + [P - 1]
    n = len(tokens)
    q = kw["q"].view(torch.uint8)[tokens].view(kw["q"].dtype)  # each decode step's query: the token's own row
    seqused = torch.tensor([K - P + 1 + t for t in tokens], dtype=torch.int32, device=dev)
    block_table = kw["block_table"].expand(n, -1).contiguous()
    rep = {}
    for name in ("q_descale", "k_descale", "v_descale"):  # the sequence's descales, repeated per decode step
        rep[name] = kw[name][:1].expand(n, -1).contiguous()
    decode = flashseek.flash_attn_varlen_func(
        q, kw["k"], kw["v"], max_seqlen_q=1, cu_seqlens_q=torch.arange(n + 1, dtype=torch.int32, device=dev),
        max_seqlen_k=int(seqused.max().item()), seqused_k=seqused, block_table=block_table,
        softmax_scale=kw["softmax_scale"], causal=True, num_splits=1, **rep)
    want = prefill[tokens]
    assert decode.dtype == want.dtype
    diff = (decode.float() - want.float()).abs()
    assert torch.equal(decode.view(torch.int16), want.view(torch.int16)), (
        f"{heads.label} {dtype}/{kv_dtype}: max |decode - prefill| {diff.max().item():.3g} over "
        f"{int((diff > 0).sum().item())} elements")


# ---- flash_attn_with_kvcache against an fp8 cache ----------------------------------------------------------

@pytest.mark.parametrize("q_dtype", [FP8, torch.bfloat16])
def test_flash_attn_with_kvcache_fp8_cache(q_dtype):
    """Upstream FA3's entry point with an e4m3 paged cache and descales equals the varlen call on the same data."""
    s = _sc(H, "8q1s900", "kvcache", dtype="e4m3" if q_dtype == FP8 else "bf16", kv_dtype="e4m3")
    inputs = make_inputs(s, "cuda", seed=session_seed())
    kw = inputs.kwargs
    b = s.batch_size
    varlen = _call(inputs, num_splits=1)  # one split in both: their max_seqlen_k (and so the heuristic) differ
    out = flashseek.flash_attn_with_kvcache(
        kw["q"].view(b, 1, s.num_heads_q, s.head_dim), kw["k"], kw["v"], cache_seqlens=kw["seqused_k"],
        page_table=kw["block_table"], q_descale=kw["q_descale"], k_descale=kw["k_descale"],
        v_descale=kw["v_descale"], softmax_scale=s.scale, causal=True, num_splits=1)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.view_as(varlen).float(), varlen.float(), atol=0, rtol=0)


def test_rejections_name_the_argument():
    s = _sc(H, "4q1s100", "reject")
    inputs = make_inputs(s, "cuda", seed=session_seed())
    kw = dict(inputs.kwargs, out=None)
    with pytest.raises(TypeError, match="k: expected dtype float8_e4m3fn"):
        flashseek.flash_attn_varlen_func(**dict(kw, k=kw["k"].to(torch.bfloat16)))
    with pytest.raises(TypeError, match="q_descale: expected dtype float32"):
        flashseek.flash_attn_varlen_func(**dict(kw, q_descale=kw["q_descale"].half()))
    with pytest.raises(ValueError, match=r"k_descale: expected shape \(B, Hkv\)"):
        flashseek.flash_attn_varlen_func(**dict(kw, k_descale=torch.ones(4, 3, device=inputs.device)))
    k_cache = kw["k"]
    with pytest.raises(NotImplementedError, match="appending into an fp8 cache"):
        flashseek.flash_attn_with_kvcache(
            kw["q"].view(4, 1, s.num_heads_q, s.head_dim), k_cache, kw["v"], k=k_cache[:4, :1],
            v=kw["v"][:4, :1], cache_seqlens=kw["seqused_k"], page_table=kw["block_table"])


# ---- the same module under each fp8 producer variant (a subprocess each: the variable is read once) -----------

_EXPERIMENTS = [] if os.environ.get("FLASHSEEK_FP8_CHILD") == "1" else [
    v.replace("+", ",")
    for v in os.environ.get("FLASHSEEK_TEST_FP8_EXPERIMENTS",
                            "fp8-convert,fp8-convert+fp8-cp8,tma-one-warp,tma-warps=4,fp8-cpasync,no-fp8-m192,"
                            "fp8-headpack,fp8-headpack2,no-fp8-producer-ahead,no-fp8-f16pv").split(",")
    if v and v != "none"]


@pytest.mark.parametrize("experiment", _EXPERIMENTS)
def test_fp8_under_experiment(experiment):
    env = dict(os.environ, FLASHSEEK_EXPERIMENT=experiment_on_top(experiment), FLASHSEEK_FP8_CHILD="1",
               FLASHSEEK_TEST_SEED=str(session_seed()))
    proc = subprocess.run([sys.executable, "-m", "pytest", str(Path(__file__).resolve()), "-q", "-x",
                           "-p", "no:cacheprovider", *_CASE_TIMEOUT],
                          env=env, capture_output=True, text=True, timeout=600)
    tail = "\n".join(proc.stdout.splitlines()[-30:])
    assert proc.returncode == 0, f"FLASHSEEK_EXPERIMENT={experiment}: module failed\n{tail}\n{proc.stderr[-2000:]}"
