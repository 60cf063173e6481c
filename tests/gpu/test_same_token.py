"""The same token gets the same bits whether it arrives in a chunked-prefill call or as a decode step (16-bit
q, k and v; test_fp8.py has the e4m3 cases). The two calls run different tiles: the prefill chunk the d96 tiles
(head dims 72-96, one-tile 128-row prefills, plan.cpp takes_d96_tiles) or the 192-row d64 tiles (one-tile and
persistent, entry 42), the decode step the 64-row tiles padded to 128 columns or d64's two-CTA tile. They agree
bit for bit because every tile of a head dim walks the same 128-key blocks in the same order and padded columns
add exact zeros. num_splits = 1 (vLLM's batch-invariant mode)."""

import pytest

from gpu_support import require_kernels, session_seed

require_kernels()

import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402


@pytest.mark.parametrize("heads,chunk,keys,dtype", [
    (custom_heads(8, 2, 96), 200, 4000, "bf16"),   # the d96 one-tile prefill against the d128-padded decode
    (custom_heads(8, 2, 80), 200, 4000, "fp16"),
    (custom_heads(16, 16, 72), 300, 3000, "bf16"),
    (custom_heads(64, 8, 64), 600, 1500, "bf16"),  # the 192-row persistent tile (200 tiles) against tile 3 / 64
    (custom_heads(8, 1, 64), 200, 1500, "bf16"),   # the 192-row one-tile kernel (9 tiles)
    (custom_heads(8, 1, 64), 200, 6000, "bf16"),
    (custom_heads(8, 2, 128), 200, 1500, "bf16"),
])
def test_same_token_same_bits_in_prefill_chunk_and_decode_step(heads, chunk, keys, dtype):
    s = make_scenario("edge", heads, ((chunk, keys),), label=f"q{chunk}s{keys}",
                      name=f"edge/same-token/{heads.label}/{dtype}", dtype=dtype, num_splits=1, page_size=16)
    inputs = make_inputs(s, "cuda", seed=session_seed())
    kw = dict(inputs.kwargs, out=None)
    prefill = flashseek.flash_attn_varlen_func(**kw)
    prefill = prefill[0] if isinstance(prefill, tuple) else prefill
    dev = inputs.device
    tokens = list(range(0, chunk, 7)) + [chunk - 1]
    n = len(tokens)
    seqused = torch.tensor([keys - chunk + 1 + t for t in tokens], dtype=torch.int32, device=dev)
    decode = flashseek.flash_attn_varlen_func(
        kw["q"][tokens], kw["k"], kw["v"], max_seqlen_q=1,
        cu_seqlens_q=torch.arange(n + 1, dtype=torch.int32, device=dev), max_seqlen_k=int(seqused.max().item()),
        seqused_k=seqused, block_table=kw["block_table"].expand(n, -1).contiguous(),
        softmax_scale=kw["softmax_scale"], causal=True, num_splits=1)
    want = prefill[tokens]
    assert not torch.isnan(want).any()
    diff = (decode.float() - want.float()).abs()
    assert torch.equal(decode.view(torch.int16), want.view(torch.int16)), (
        f"{heads.label} {dtype}: max |decode - prefill| {diff.max().item():.3g} over "
        f"{int((diff > 0).sum().item())} elements")
