"""The keys-as-M decode tiles (decode tiles 5 and 6, d128 and d64, and 7 and 8 on two CTAs per SM;
sm90/consumer_keys_as_m.h): bf16 calls whose
packed query rows (query tokens x group heads) fit 8 columns run S^T = K Q^T and O^T = V^T P^T with the keys as M,
by default where the table's one-CTA decode tile would run, and 7 / 8 where the two-CTA tiles 1 / 3 would (plan.cpp;
tile=5 forces d128's wherever rows fit). The cases cover what that consumer does itself: the column softmax across four warps (several key
blocks, a partial last block, a one-key sequence), masks per column (two causal tokens, a sliding window), soft
cap, sinks (in the epilogue and in the combine), splits (partials and LSE), groups of 1, 4, 7 and 8 heads, paged by
TMA and by copies (1-token pages), a batched cache with unused NaN slots. Each case runs in this process under
whatever FLASHSEEK_EXPERIMENT is set (unset: the plan's rule; no-keys-as-m: the 64-row tiles), and
test_module_under re-runs the module in a subprocess under each of RERUN_TOKENS (the variable is read once per
process)."""

from gpu_support import assert_passes, require_kernels, rerun_module_under, running_under, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

# The module again in a subprocess under each of (the variable is read once per process):
#   tile=5            d128's keys-as-M tile wherever rows fit;
#   no-fp8-keys-as-m  the e4m3 cases on the native 64-row tile (variant 208 is their default since entry 95);
#   no-fp8-kam2       the e4m3 two-CTA cases on the native two-CTA tile (206; its keys-as-M form, variant 209, is their
#                     default since entry 107);
#   kam2-split2       the one-wave long decodes in two splits on the two-CTA keys-as-M tiles (entry 108);
#   no-kam2-splits    the split decodes on the one-CTA keys-as-M tiles 5 / 6 (the two-CTA tiles 7 / 8 in twice the
#                     splits are their default since entry 118);
#   no-kam4           the d64 two-CTA cases on two CTAs per SM (decode tile 8; tile 9, four CTAs per SM, is their
#                     default since entry 111).
RERUN_TOKENS = ("tile=5", "no-fp8-keys-as-m", "no-fp8-kam2", "kam2-split2", "no-kam2-splits", "no-kam4")
UNDER_FORCED_TILE = running_under(RERUN_TOKENS)


def _sc(heads, batch, name, **kw):
    kw.setdefault("causal", True)
    return make_scenario("edge", heads, batch, suffix=["keys-as-m", name], **kw)


G8 = custom_heads(8, 1, 128)
CASES = [
    _sc("L70t8", "q1s1000_q1s1_q1s64_q1s65_q1s129", "g8-varlen-partial-blocks", return_lse=True),
    _sc("L70t8", "q1s32k", "g8-splits32-md", num_splits=32, use_scheduler_metadata=True, return_lse=True),
    _sc("L70t8", "q1s20000_q1s3_q1s5000", "g8-own-splits", return_lse=True),
    _sc("Q7", "8q1s1k", "g7", return_lse=True),
    _sc(custom_heads(8, 2, 128), "4q2s700", "two-tokens-causal", return_lse=True),
    _sc(custom_heads(8, 8, 128), "4q1s2k", "g1-mha"),
    _sc(G8, "4q1s3000", "window-softcap", window=(255, 0), softcap=30.0, return_lse=True),
    _sc(G8, "4q1s2000", "sinks", sinks=True, return_lse=True),
    _sc(G8, "2q1s9000", "sinks-splits", sinks=True, num_splits=8, return_lse=True),
    _sc(G8, "4q1s1328", "page1", page_size=1),
    _sc(G8, "6q1s700", "batched-gaps", kv_layout="batched", kv_gap=37),
    _sc(G8, "3q1s2500", "varlen-kv", kv_layout="varlen"),
    _sc(G8, "4q1s1500", "noout", out_given=False),
    _sc(custom_heads(8, 1, 96), "4q1s1500", "d96-padded", return_lse=True),
    # d64 (tile 6)
    _sc("OSSt8", "q1s1000_q1s1_q1s64_q1s65_q1s129", "d64-g8-varlen-partial-blocks", return_lse=True),
    _sc("OSSt8", "q1s32k", "d64-splits32-md", num_splits=32, use_scheduler_metadata=True, return_lse=True),
    _sc(custom_heads(8, 1, 64), "4q1s2000", "d64-sinks-window", sinks=True, window=(127, 0), return_lse=True),
    _sc(custom_heads(8, 1, 64), "4q1s3000", "d64-softcap", softcap=30.0),
    _sc(custom_heads(8, 2, 64), "4q2s700", "d64-two-tokens-causal", return_lse=True),
    # grids of 1.5 waves and more: the keys-as-M consumer on the two-CTA tiles' stages (tiles 7 and 8, entry 105;
    # tiles 1 and 3 under no-kam2): block_n 64 at d128 (partial blocks, a keyless sequence), window, soft cap, sinks
    _sc("L70t8", "256q1s700_q1s0_q1s65", "g8-two-cta-zero-kv", return_lse=True),
    _sc("Q7", "64q1s1100", "g7-two-cta-window-softcap", window=(300, 0), softcap=30.0, return_lse=True),
    _sc("OSSt8", "256q1s900_q1s1_q1s129", "d64-g8-two-cta", return_lse=True),
    _sc(custom_heads(8, 1, 64), "256q1s600", "d64-two-cta-sinks-window", sinks=True, window=(127, 0),
        return_lse=True),
    # one wave of long decodes: two splits on tiles 7 / 8 under kam2-split2 (entry 108), tile 5 / 6 by default
    _sc("L70t8", "120q1s4200_q1s1_q1s65", "g8-one-wave-long", return_lse=True),
    _sc(custom_heads(8, 1, 64), "110q1s4500", "d64-one-wave-long-sinks-softcap", sinks=True, softcap=30.0,
        return_lse=True),
    # e4m3 q, k and v at d128 (variant 208 by default; the native 64-row tile under no-fp8-keys-as-m)
    _sc("L70t8", "q1s1000_q1s1_q1s64_q1s65_q1s129", "e4m3-g8-varlen", dtype="e4m3", descale="random",
        return_lse=True),
    _sc("L70t8", "q1s32k", "e4m3-splits32-md", dtype="e4m3", descale="stride0", num_splits=32,
        use_scheduler_metadata=True, return_lse=True),
    _sc(G8, "4q1s2000", "e4m3-sinks-window-softcap", dtype="e4m3", descale="random", sinks=True,
        window=(255, 0), softcap=30.0),
    _sc(custom_heads(8, 2, 128), "4q2s700", "e4m3-two-tokens-causal", dtype="e4m3", descale="random",
        return_lse=True),
    _sc(G8, "4q1s1328", "e4m3-page1", dtype="e4m3", page_size=1),
    # grids of 1.5 waves and more: the keys-as-M form (209) of the native two-CTA tile, or 206 under no-fp8-kam2
    _sc("L8", "200q1s700_q1s0_q1s65", "e4m3-two-cta-zero-kv", dtype="e4m3", descale="random", return_lse=True),
    _sc("Q7", "64q1s900", "e4m3-two-cta-g7-sinks-window-softcap", dtype="e4m3", descale="stride0", sinks=True,
        window=(200, 0), softcap=30.0, return_lse=True),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_keys_as_m_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


def test_planner_takes_the_keys_as_m_tile_where_rows_fit():
    """The scheduler metadata's header: block_n 128 either way (tile 5 keeps the table tile's key blocks), and
    the split count of a 32k GQA-8 decode is the table tile's."""
    seqlens = torch.full((1,), 32768, dtype=torch.int32, device="cuda")
    md = flashseek.get_scheduler_metadata(1, 1, 32768, 8, 1, 128, seqlens, qkv_dtype=torch.bfloat16, page_size=16,
                                          num_splits=32)
    header = md[:8].tolist()
    assert header[1] == 32 and header[2] == 64 and header[3] == 128, header


@pytest.mark.skipif(UNDER_FORCED_TILE, reason="this process already runs under a forced tile")
@pytest.mark.parametrize("tokens", RERUN_TOKENS)
def test_module_under(tokens):
    rerun_module_under(__file__, tokens)
