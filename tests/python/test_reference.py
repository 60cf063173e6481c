"""The fp32 reference against a brute-force loop over single elements in float64 Python arithmetic, written
straight from semantics.md: masks (bottom-right causal, windows), softcap, sinks, GQA, q_v, context-parallel key
positions, LSE, rows that see no key."""

import math
import random

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: reference tests need it")

from flashseek.testing.reference import (apply_rotary, attention_ref, merge_ref, naive_fp8, naive_same_dtype,  # noqa: E402
                                         visible)


def brute_force(q, k, v, *, scale, causal, window, softcap, sink, q_v=None, key_pos=None, k_total=None):
    """Per element, float64, no vectorisation: the definition."""
    sq, hq, d = q.shape
    sk, hkv, dv = v.shape
    group = hq // hkv
    total = sk if k_total is None else k_total
    pos = list(range(sk)) if key_pos is None else [int(p) for p in key_pos]
    left, right = window
    if causal:
        right = 0
    out = [[[0.0] * dv for _ in range(hq)] for _ in range(sq)]
    lse = [[-math.inf] * sq for _ in range(hq)]
    qd, kd, vd = q.double().tolist(), k.double().tolist(), v.double().tolist()
    qvd = None if q_v is None else q_v.double().tolist()
    for i in range(sq):
        diag = i + total - sq
        for h in range(hq):
            kh = h // group
            logits = []
            for j in range(sk):
                if left >= 0 and pos[j] < diag - left:
                    continue
                if right >= 0 and pos[j] > diag + right:
                    continue
                s = sum(qd[i][h][c] * kd[j][kh][c] for c in range(d))
                if qvd is not None:
                    s += sum(qvd[i][h][c] * vd[j][kh][c] for c in range(dv))
                s *= scale
                if softcap > 0:
                    s = softcap * math.tanh(s / softcap)
                logits.append((j, s))
            terms = [s for _, s in logits] + ([float(sink[h])] if sink is not None else [])
            if not terms:
                continue  # sees nothing: 0, -inf
            m = max(terms)
            denom = sum(math.exp(t - m) for t in terms)
            lse[h][i] = m + math.log(denom)
            for c in range(dv):
                out[i][h][c] = sum(math.exp(s - m) * vd[j][kh][c] for j, s in logits) / denom
    return (torch.tensor(out, dtype=torch.float64).reshape(sq, hq, dv),
            torch.tensor(lse, dtype=torch.float64).reshape(hq, sq))


def _rand(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


CASES = [
    # (sq, sk, hq, hkv, causal, window, softcap, sinks)
    (5, 9, 4, 2, True, (-1, -1), 0.0, False),     # bottom-right causal, Sq < Sk
    (6, 6, 4, 4, True, (-1, -1), 0.0, False),     # square causal
    (7, 3, 4, 2, True, (-1, -1), 0.0, False),     # Sq > Sk: the first rows see nothing
    (7, 3, 4, 2, True, (-1, -1), 0.0, True),      # ... and with a sink they output 0 with LSE = s_aux
    (5, 9, 4, 1, False, (-1, -1), 0.0, False),    # full, MQA
    (5, 9, 4, 2, True, (2, -1), 0.0, False),      # causal sliding window
    (5, 9, 4, 2, True, (2, 7), 0.0, False),       # causal forces right = 0
    (6, 6, 2, 2, False, (1, 1), 0.0, False),      # bidirectional window
    (4, 9, 2, 2, False, (0, 2), 0.0, False),      # asymmetric
    (5, 9, 4, 2, True, (-1, -1), 2.0, False),     # softcap
    (5, 9, 4, 2, True, (3, 0), 2.0, True),        # all together
    (1, 1, 2, 1, True, (-1, -1), 0.0, True),
    (3, 0, 2, 1, True, (-1, -1), 0.0, False),     # no keys at all
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_reference_matches_brute_force(case):
    sq, sk, hq, hkv, causal, window, softcap, sinks = case
    d = dv = 3
    q, k, v = _rand(sq, hq, d, seed=1) * 2, _rand(sk, hkv, d, seed=2) * 2, _rand(sk, hkv, dv, seed=3)
    sink = _rand(hq, seed=4) if sinks else None
    kw = dict(scale=0.7, causal=causal, window=window, softcap=softcap, sink=sink)
    out, lse = attention_ref(q, k, v, **kw)
    bout, blse = brute_force(q, k, v, **kw)
    torch.testing.assert_close(out.double(), bout, atol=1e-5, rtol=1e-5)
    assert torch.equal(torch.isinf(lse), torch.isinf(blse))
    torch.testing.assert_close(lse.double(), blse, atol=1e-5, rtol=1e-5)


def test_reference_small_chunks_equal_one_chunk():
    q, k, v = _rand(37, 4, 8, seed=5), _rand(50, 2, 8, seed=6), _rand(50, 2, 8, seed=7)
    kw = dict(scale=0.3, causal=True, window=(9, 0), softcap=0.0, sink=None)
    a, la = attention_ref(q, k, v, **kw)
    b, lb = attention_ref(q, k, v, **kw, chunk_elems=1)  # one row per chunk, key ranges skipped per chunk
    torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(la, lb, atol=1e-6, rtol=1e-6)


def test_q_v_and_context_parallel_positions():
    q, k, v = _rand(3, 4, 2, seed=8), _rand(5, 1, 2, seed=9), _rand(5, 1, 4, seed=10)
    q_v = _rand(3, 4, 4, seed=11)
    key_pos = torch.tensor([1, 4, 7, 10, 13])  # rank 1 of W = 3 holds global keys 1, 4, 7, ...
    kw = dict(scale=0.5, causal=True, window=(-1, -1), softcap=0.0, sink=None, q_v=q_v, key_pos=key_pos,
              k_total=14)
    out, lse = attention_ref(q, k, v, **kw)
    bout, blse = brute_force(q, k, v, **kw)
    torch.testing.assert_close(out.double(), bout, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse.double(), blse, atol=1e-5, rtol=1e-5)


def test_visible_rule():
    rows, keys = torch.arange(3), torch.arange(5)
    # Sq 3, Sk 5: row i sees keys j <= i + 2
    assert visible(rows, keys, 3, 5, True, (-1, -1)).int().tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0],
                                                                        [1, 1, 1, 1, 1]]
    assert visible(rows, keys, 3, 5, True, (1, -1)).int().tolist() == [[0, 1, 1, 0, 0], [0, 0, 1, 1, 0],
                                                                       [0, 0, 0, 1, 1]]
    assert visible(rows, keys, 3, 5, False, (0, 1)).int().tolist() == [[0, 0, 1, 1, 0], [0, 0, 0, 1, 1],
                                                                       [0, 0, 0, 0, 1]]


def test_empty_rows_output_zero_and_minus_inf():
    q, k, v = _rand(4, 2, 4, seed=12), _rand(2, 2, 4, seed=13), _rand(2, 2, 4, seed=14)
    out, lse = attention_ref(q, k, v, scale=1.0, causal=True)  # Sq 4 > Sk 2: rows 0, 1 see nothing
    assert torch.all(out[:2] == 0) and torch.all(torch.isneginf(lse[:, :2])) and torch.isfinite(lse[:, 2:]).all()
    sink = torch.tensor([0.5, -1.0])
    out, lse = attention_ref(q, k, v, scale=1.0, causal=True, sink=sink)
    assert torch.all(out[:2] == 0) and torch.equal(lse[:, 0], sink) and torch.equal(lse[:, 1], sink)


def test_sink_only_in_denominator():
    q, k, v = _rand(1, 1, 4, seed=15), _rand(6, 1, 4, seed=16), _rand(6, 1, 4, seed=17)
    plain, lse = attention_ref(q, k, v, scale=0.5)
    sink = torch.tensor([1.3])
    with_sink, lse_s = attention_ref(q, k, v, scale=0.5, sink=sink)
    # out_sink = out * Z / (Z + e^sink) and LSE = log(Z + e^sink)
    z = torch.exp(lse[0, 0])
    torch.testing.assert_close(with_sink, plain * z / (z + torch.exp(sink)), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(lse_s[0, 0], torch.log(z + torch.exp(sink[0])), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_naive_is_close_but_not_exact(dtype):
    q, k, v = (_rand(40, 4, 64, seed=s).to(dtype) for s in (18, 19, 20))
    k, v = k[:, :2], v[:, :2]
    ref, _ = attention_ref(q, k, v, scale=0.125, causal=True)
    naive = naive_same_dtype(q, k, v, scale=0.125, causal=True)
    err = (naive.float() - ref).abs().max().item()
    assert naive.dtype == dtype and 0 < err < 2e-2


@pytest.mark.skipif(getattr(torch, "float8_e4m3fn", None) is None, reason="this torch has no float8_e4m3fn")
def test_naive_fp8_rounds_p_to_e4m3():
    """FA3's fp8 naive: P rounded to e4m3 makes it much coarser than the bf16 naive, yet close to the reference."""
    q, k, v = (_rand(40, 4, 64, seed=s).to(torch.float8_e4m3fn).float() for s in (22, 23, 24))
    k, v = k[:, :2], v[:, :2]
    ref, _ = attention_ref(q, k, v, scale=0.125, causal=True)
    naive8 = naive_fp8(q, k, v, scale=0.125, causal=True)
    naive16 = naive_same_dtype(q.bfloat16(), k.bfloat16(), v.bfloat16(), scale=0.125, causal=True)
    err8 = (naive8.float() - ref).abs().max().item()
    err16 = (naive16.float() - ref).abs().max().item()
    assert naive8.dtype == torch.bfloat16 and err16 < err8 < 0.15


@pytest.mark.parametrize("interleaved", [True, False])
def test_apply_rotary(interleaved):
    x = _rand(2, 3, 1, 6, seed=21)  # (B, S, H, d), rotary_dim 4: last 2 channels untouched
    angles = _rand(10, 2, seed=22)
    cos, sin = torch.cos(angles), torch.sin(angles)
    pos = torch.tensor([[0, 4, 9], [2, 2, 3]])
    got = apply_rotary(x, cos, sin, pos, interleaved)
    for b in range(2):
        for s in range(3):
            p, row = int(pos[b, s]), x[b, s, 0].tolist()
            pairs = [(0, 1), (2, 3)] if interleaved else [(0, 2), (1, 3)]
            exp = list(row)
            for n, (a, c) in enumerate(pairs):
                co, si = math.cos(angles[p, n]), math.sin(angles[p, n])
                exp[a] = row[a] * co - row[c] * si
                exp[c] = row[a] * si + row[c] * co
            torch.testing.assert_close(got[b, s, 0], torch.tensor(exp), atol=1e-5, rtol=1e-5)


def test_merge_ref_equals_attention_over_the_union():
    q, k, v = _rand(3, 2, 4, seed=23), _rand(9, 2, 4, seed=24), _rand(9, 2, 4, seed=25)
    full, lse = attention_ref(q, k, v, scale=0.5)
    a, la = attention_ref(q, k[:4], v[:4], scale=0.5)
    b, lb = attention_ref(q, k[4:], v[4:], scale=0.5)
    merged, mlse = merge_ref(a, la, b, lb)
    torch.testing.assert_close(merged, full, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(mlse, lse, atol=1e-6, rtol=1e-6)
    # an empty partial reported as +inf (FA3) counts as -inf
    merged, mlse = merge_ref(a, la, torch.zeros_like(b), torch.full_like(lb, float("inf")))
    torch.testing.assert_close(merged, a, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(mlse, la, atol=1e-6, rtol=1e-6)


def test_random_against_brute_force():
    r = random.Random(7)
    for trial in range(60):
        sq, sk = r.randint(0, 6), r.randint(0, 8)
        hkv = r.choice([1, 2])
        hq = hkv * r.choice([1, 2])
        causal = r.random() < 0.5
        window = (r.choice([-1, 0, 1, 3]), r.choice([-1, 0, 2]))
        kw = dict(scale=r.uniform(0.2, 1.0), causal=causal, window=window, softcap=r.choice([0.0, 1.5]),
                  sink=_rand(hq, seed=trial) if r.random() < 0.4 else None)
        q, k = _rand(sq, hq, 2, seed=100 + trial), _rand(sk, hkv, 2, seed=200 + trial)
        v = _rand(sk, hkv, 3, seed=300 + trial)
        out, lse = attention_ref(q, k, v, **kw)
        bout, blse = brute_force(q, k, v, **kw)
        torch.testing.assert_close(out.double(), bout, atol=1e-5, rtol=1e-5, msg=f"trial {trial}: {kw}")
        assert torch.equal(torch.isinf(lse), torch.isinf(blse)), f"trial {trial}"
        torch.testing.assert_close(lse.double(), blse, atol=1e-5, rtol=1e-5)
