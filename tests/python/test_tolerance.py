"""The pass rules: FA3's relative rule, vLLM's absolute rule, the LSE rule, non-finite outputs, the comparator."""

import math

import pytest

from flashseek.testing import tolerance as tol

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed: tensor rule tests need it")


def test_fa3_bound_pure():
    assert tol.fa3_bound(0.01, 0.004, 0.0) == pytest.approx(0.024)
    assert tol.fa3_bound(0.01, 0.004, 50.0) == pytest.approx(0.034)  # 3x with softcap
    assert tol.lse_tolerance(10.0, 0.0) == pytest.approx(2e-4 + 1e-4)
    assert tol.lse_tolerance(0.0, 30.0) == pytest.approx(2e-4 + 4e-3)
    assert tol.vllm_tolerances("bf16") == (1.5e-2, 1e-2)
    assert tol.vllm_tolerances("e4m3") == (0.15, 0.15)


def _case(seed=0, n=64, h=4, d=16):
    g = torch.Generator().manual_seed(seed)
    ref = torch.randn(n, h, d, generator=g) * 0.3
    naive = (ref + torch.randn(n, h, d, generator=g) * 2e-3).to(torch.bfloat16)
    return ref, naive


@needs_torch
def test_rounding_atol_matches_fa3_formula():
    ref = torch.tensor([0.0, 0.1, 0.2, -0.25])
    # bf16: 0.3 + x lands in [0.25, 0.5) (ulp 2^-9) or [0.5, 1) (ulp 2^-8); FA3 doubles the worst rounding
    got = tol.rounding_atol(ref, torch.bfloat16)
    r = ref.to(torch.bfloat16)
    assert got == pytest.approx(2 * ((r + 0.3) - 0.3 - r).abs().max().item())
    assert 0 < got <= 2 * 2 ** -8
    assert tol.rounding_atol(torch.zeros(0), torch.bfloat16) == 0.0


@needs_torch
def test_pass_when_as_good_as_naive():
    ref, naive = _case()
    res = tol.check_output(naive.clone(), ref, naive, dtype_name="bf16", softcap=0.0)
    assert res.correct, res.reason
    assert res.err == pytest.approx(res.naive_err) and res.err <= res.err_bound


@needs_torch
def test_fail_beyond_bound_names_worst_element():
    ref, naive = _case()
    out = naive.clone()
    out[5, 2, 7] += 0.5
    res = tol.check_output(out, ref, naive, dtype_name="bf16", softcap=0.0)
    assert not res.correct and "FA3 rule" in res.reason and "vLLM rule" in res.reason
    assert res.worst.index == (5, 2, 7)


@needs_torch
def test_softcap_allows_three_times():
    ref, naive = _case()
    bound2 = tol.check_output(naive, ref, naive, dtype_name="bf16", softcap=0.0).err_bound
    bound3 = tol.check_output(naive, ref, naive, dtype_name="bf16", softcap=50.0).err_bound
    assert bound3 > bound2


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@needs_torch
def test_non_finite_output_fails(bad):
    ref, naive = _case()
    out = naive.clone()
    out[3, 1, 0] = bad
    res = tol.check_output(out, ref, naive, dtype_name="bf16", softcap=0.0)
    assert not res.correct and "non-finite" in res.reason and res.worst.index == (3, 1, 0)


@needs_torch
def test_kvcache_mean_rule():
    ref, naive = _case()
    # spread an error well inside the max bound over every element: the max rule passes, the mean rule fails
    res0 = tol.check_output(naive, ref, naive, dtype_name="bf16", softcap=0.0)
    out = (ref + 0.008).to(torch.bfloat16)
    assert res0.err_bound > 0.02
    assert tol.check_output(out, ref, naive, dtype_name="bf16", softcap=0.0).correct
    res = tol.check_output(out, ref, naive, dtype_name="bf16", softcap=0.0, kvcache=True)
    assert not res.correct and "mean rule" in res.reason


@needs_torch
def test_vllm_rule_elementwise():
    ref = torch.full((2, 2, 2), 1.0)
    ok, _ = tol.vllm_rule(ref + 0.024, ref, "bf16")  # 1.5e-2 + 1e-2 * 1 = 2.5e-2
    bad, why = tol.vllm_rule(ref + 0.026, ref, "bf16")
    assert ok and not bad and "8 of 8" in why


@needs_torch
def test_vllm_rule_floor_slack():
    # Unquantized reference 0, bound 0.15. The floor (exact on the quantized inputs) sits 0.149 away: inside by
    # 0.001. A kernel 0.002 past the floor fails without slack; with a slack larger than the floor's margin
    # (the element is one the kernel's allowed error can cross) it counts no more; a kernel far past still fails
    # where the floor keeps a margin larger than the slack.
    ref = torch.zeros(4)
    floor = torch.tensor([0.149, 0.149, 0.0, 0.0])
    out = torch.tensor([0.151, 0.151, 0.0, 0.2])
    bad, why = tol.vllm_rule(out, ref, "e4m3", floor=floor)
    assert not bad and "3 of 4" in why
    slack = torch.tensor([0.004, 0.004, 0.004, 0.004])
    bad, why = tol.vllm_rule(out, ref, "e4m3", floor=floor, floor_slack=slack)
    assert not bad and "1 of 4" in why
    ok, _ = tol.vllm_rule(out[:3], ref[:3], "e4m3", floor=floor[:3], floor_slack=slack[:3])
    assert ok


@needs_torch
def test_fp8_uses_vllm_rule_only():
    ref, naive = _case()
    out = (ref + 0.1).to(torch.bfloat16)
    res = tol.check_output(out, ref, None, dtype_name="e4m3", softcap=0.0)
    assert res.correct and res.err_bound >= 0.15


@needs_torch
def test_fp8_rule_is_4x_max_and_3x_mean_of_the_naive():
    ref, _ = _case()
    g = torch.Generator().manual_seed(5)
    noise = torch.randn(ref.shape, generator=g)
    naive = (ref + 0.01 * noise).to(torch.bfloat16)
    naive_err = tol.max_abs(naive, ref)
    good = (ref + 0.02 * noise).to(torch.bfloat16)  # ~2x the naive error everywhere
    res = tol.check_output(good, ref, naive, dtype_name="e4m3", softcap=0.0)
    assert res.correct, res.summary()
    assert res.err_bound == pytest.approx(4 * naive_err + tol.rounding_atol(ref, torch.bfloat16))
    spike = good.clone()
    spike[0, 0, 0] += 5 * naive_err  # one element past 4x: the max rule fails, the mean rule does not
    res = tol.check_output(spike, ref, naive, dtype_name="e4m3", softcap=0.0)
    assert not res.correct and "FA3 fp8 rule" in res.reason and "mean" not in res.reason
    broad = (ref + 0.035 * noise).to(torch.bfloat16)  # 3.5x the naive error everywhere: the mean rule fails
    res = tol.check_output(broad, ref, naive, dtype_name="e4m3", softcap=0.0)
    assert not res.correct and "FA3 fp8 mean rule" in res.reason


@needs_torch
def test_fp8_vllm_rule_judges_against_the_unquantized_reference():
    ref, naive = _case()
    unquantized = ref + 0.01  # the exact result on the quantized inputs is inside vLLM's 0.15/0.15 there
    res = tol.check_output(naive.clone(), ref, naive, dtype_name="e4m3", softcap=0.0, ref_unquantized=unquantized)
    assert res.correct, res.summary()
    off = naive.clone()
    off[0, 0, 0] += 0.5  # one element far from the unquantized result where the exact one is close: fails
    res = tol.check_output(off, ref, naive, dtype_name="e4m3", softcap=0.0, ref_unquantized=unquantized)
    assert not res.correct and "against the unquantized inputs" in res.reason and "1 of" in res.reason
    # Where the exact result on the quantized inputs is outside too, the miss is the inputs' quantization.
    res = tol.check_output(naive.clone(), ref, naive, dtype_name="e4m3", softcap=0.0, ref_unquantized=ref + 0.5)
    assert "unquantized" not in res.reason, res.summary()


@needs_torch
def test_lse_rule():
    ref = torch.tensor([[1.0, float("-inf"), 3.0]])
    assert tol.lse_rule(ref.clone(), ref, 0.0)[0]
    assert tol.lse_rule(ref + torch.tensor([[1e-4, 0.0, -1e-4]]), ref, 0.0)[0]
    ok, _, _, why = tol.lse_rule(ref + torch.tensor([[1e-3, 0.0, 0.0]]), ref, 0.0)
    assert not ok and "(0, 0)" in why
    plus_inf = ref.clone()
    plus_inf[0, 1] = float("inf")  # FA3 reports +inf for empty rows; the contract is -inf
    assert not tol.lse_rule(plus_inf, ref, 0.0)[0]
    finite_for_empty = ref.clone()
    finite_for_empty[0, 1] = -80.0
    assert not tol.lse_rule(finite_for_empty, ref, 0.0)[0]
    nan = ref.clone()
    nan[0, 2] = float("nan")
    assert not tol.lse_rule(nan, ref, 0.0)[0]
    assert tol.lse_rule(ref + 3e-3, ref, 50.0)[0]  # softcap's tanh approximation allowance


@needs_torch
def test_lse_rule_fp8_scales_with_the_naive_error():
    ref = torch.tensor([[1.0, float("-inf"), 3.0]])
    naive = ref + torch.tensor([[0.0, 0.0, 0.01]])  # the bf16-logit naive misses by 0.01
    near = ref + torch.tensor([[0.03, 0.0, 0.0]])  # 3x the naive's error: inside 4x
    far = ref + torch.tensor([[0.0, 0.0, 0.05]])  # 5x: outside
    assert not tol.lse_rule(near, ref, 0.0)[0]  # the strict (16-bit) bound rejects it
    ok, _, bound, _ = tol.lse_rule(near, ref, 0.0, naive_lse=naive)
    assert ok and bound == pytest.approx(4 * 0.01 + tol.LSE_ATOL, rel=1e-4)
    ok, _, _, why = tol.lse_rule(far, ref, 0.0, naive_lse=naive)
    assert not ok and "(0, 2)" in why
    plus_inf = near.clone()
    plus_inf[0, 1] = float("inf")  # masked rows stay exact under the fp8 bound too
    assert not tol.lse_rule(plus_inf, ref, 0.0, naive_lse=naive)[0]
    # check_output takes the naive's LSE only for e4m3
    ref_o, naive_o = _case(n=3)
    lse0 = torch.zeros(4, 3)
    kw = dict(softcap=0.0, lse=lse0 + 0.03, ref_lse=lse0, naive_lse=lse0 + 0.01)
    assert "LSE" in tol.check_output(naive_o, ref_o, naive_o, dtype_name="bf16", **kw).reason
    assert "LSE" not in tol.check_output(naive_o, ref_o, naive_o, dtype_name="e4m3", **kw).reason


@needs_torch
def test_check_output_includes_lse():
    ref, naive = _case(n=3)
    lse = torch.zeros(4, 3)
    res = tol.check_output(naive, ref, naive, dtype_name="bf16", softcap=0.0, lse=lse + 1, ref_lse=lse)
    assert not res.correct and "LSE" in res.reason and res.lse_err == pytest.approx(1.0)


@needs_torch
def test_worst_element_and_result_dict():
    out = torch.zeros(2, 3, 4)
    ref = torch.zeros(2, 3, 4)
    out[1, 2, 3] = 0.5
    w = tol.worst_element(out, ref)
    assert w.index == (1, 2, 3) and w.err == pytest.approx(0.5)
    assert tol.worst_element(torch.zeros(0, 3, 4), torch.zeros(0, 3, 4)) is None
    d = tol.check_output(out, ref, ref.to(torch.bfloat16), dtype_name="bf16", softcap=0.0).to_dict()
    assert d["correct"] is False and "(1, 2, 3)" in d["worst"]
    assert math.isfinite(d["err"])


@needs_torch
def test_empty_output_passes():
    z = torch.zeros(0, 4, 8)
    assert tol.check_output(z.to(torch.bfloat16), z, z.to(torch.bfloat16), dtype_name="bf16", softcap=0.0).correct
