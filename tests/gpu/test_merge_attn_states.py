"""merge_attn_states (vLLM's merge of two partial results by LSE) against the fp32 merge, including +inf LSEs
(FA3's empty partials, which must count as -inf) and -inf ones. vLLM's test uses atol = rtol = 1e-2."""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.reference import merge_ref  # noqa: E402


@pytest.mark.parametrize("tokens", [1, 39, 16912])
@pytest.mark.parametrize("heads,dim", [(4, 128), (8, 192), (16, 256), (64, 64)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_merge(tokens, heads, dim, dtype):
    gen = torch.Generator(device="cuda").manual_seed(session_seed())
    rand = lambda *shape: torch.randn(*shape, generator=gen, device="cuda")  # noqa: E731
    p_out, s_out = rand(tokens, heads, dim).to(dtype), rand(tokens, heads, dim).to(dtype)
    p_lse, s_lse = rand(heads, tokens) * 3, rand(heads, tokens) * 3
    p_lse[0, :: 7] = float("inf")   # an empty prefix partial as FA3 reports it
    s_lse[-1, :: 5] = float("-inf")  # an empty suffix partial
    out = torch.full_like(p_out, float("nan"))
    out_lse = torch.full((heads, tokens), float("nan"), device="cuda")
    flashseek.merge_attn_states(out, p_out, p_lse, s_out, s_lse, out_lse)
    ref, ref_lse = merge_ref(p_out, p_lse, s_out, s_lse)
    torch.testing.assert_close(out.float(), ref, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(out_lse, ref_lse, atol=1e-4, rtol=1e-5)
