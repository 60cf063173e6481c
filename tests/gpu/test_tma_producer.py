"""The TMA producer (src/sm90/producer_tma.h, the default for 16-bit K/V) against the cp.async producer
(FLASHSEEK_EXPERIMENT=cpasync), and the persistent kernel (FLASHSEEK_EXPERIMENT=3587, src/sm90/fwd_persistent.h,
bf16 d128 and d64 prefill tiles) against the one-CTA-per-tile kernel, each in a child process (the variable is read once
per process). Each pair fills the same shared-memory tiles in the same order, so out and LSE must agree bit for
bit, on every K/V layout the TMA producer describes:
dense varlen rows, paged NHD and HND caches with boxes of 8, 16 and 128 rows (page sizes 8, 16, 64 against
block_n 80 / 112 / 128, and 256), batched caches (cache_batch_idx, left padding), and the page sizes that fall
back to cp.async (1 and 4). The 192-row d64 tile (three consumer warpgroups) against FLASHSEEK_EXPERIMENT=no-m192's
128 rows: the same key blocks and softmax steps per row, so the same bits; so too the short d64 tiles on the
192-row persistent kernel (the default) against the 128-row one (no-persist192) and against persist192-strict. The d64
two-CTA decode tile (tile=3)
against the table's d64 decode tile: the same block_n, so the same bits. K and V boxes issued by one producer warp
(tma-one-warp) and by four (tma-warps=4) against two (the default): the same tiles. The K/V maps under another L2
promotion (l2promo=256, entry 51): a cache hint only, so the same bits. The forward and merge launched as
programmatic dependents, the combine let in early and loading its partials beside the LSEs (entry 53): the same
sums in the same order. The kvcache append and the cascade's merge loading their rows column by column
(no-row-prefetch) against whole rows first (the default, entry 54): the same arithmetic. A flat grid launched from
either end (flat-order=0 / 2, entry 98) and the 192-row native e4m3 d64 tile on its one-tile kernel
(no-fp8-persist) against the persistent kernel (the default since entry 99): the same tiles. Each case must also
pass the fp32 reference (so a shared mistake in both still fails). The windowed cases compare both sides with their
key blocks pinned to key 0 on the 128-key tiles (KEY_BLOCKS_PINNED)."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __name__ != "__main__":
    from gpu_support import assert_passes, experiment_on_top, require_kernels, session_seed

    require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import custom_heads, make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import call_flashseek, run_scenario  # noqa: E402
from flashseek.testing.tolerance import lse_rule  # noqa: E402

_lse = dict(return_lse=True)
CASES = [
    make_scenario("prefill-varlen", "L8", "q257_q1k_q63_q4093", suffix=["varlen"], kv_layout="varlen", **_lse),
    make_scenario("prefill-varlen", "VIT72", "4q729", suffix=["varlen", "noncausal"], kv_layout="varlen",
                  causal=False, **_lse),
    make_scenario("prefill-dense", "G9", "2q1000", suffix=["varlen", "d256"], kv_layout="varlen", **_lse),
    make_scenario("prefill-dense", "MLAp16", "2q1000", suffix=["varlen", "d192x128"], kv_layout="varlen", **_lse),
    make_scenario("decode-paged", "L8", "16q1s2000", suffix=["p16"], **_lse),
    make_scenario("decode-paged", "L8", "16q1s2000", suffix=["p16", "hnd"], hnd=True, **_lse),
    make_scenario("spec-decode", "G9", "8q4s1500", suffix=["p64", "d256"], page_size=64, **_lse),
    make_scenario("mixed", "MLAp16", "q700_8q1s1200", suffix=["p64", "d192"], page_size=64, **_lse),
    make_scenario("decode-paged", custom_heads(16, 4, 192), "8q1s1500", suffix=["p8", "d192"], page_size=8,
                  **_lse),
    make_scenario("decode-paged", "L70", "8q1s3000", suffix=["p256"], page_size=256, **_lse),
    make_scenario("decode-splitkv", "L70t8", "q1s20000_q1s77", suffix=["p16", "splits8"], num_splits=8, **_lse),
    make_scenario("sliding-window", "OSS", "q1500_8q1s2000", suffix=["p16", "w128"], window=(127, 0), **_lse),
    make_scenario("kvcache", "L8", "8q1s1500", suffix=["batched", "batch-idx"], kv_layout="batched",
                  cache_batch_idx=True, entry="kvcache", **_lse),
    make_scenario("kvcache", "L8", "8q1s1500", suffix=["batched", "leftpad"], kv_layout="batched", leftpad=True,
                  entry="kvcache", **_lse),
    make_scenario("kvcache", "L8", "8q1s1000", suffix=["p1"], page_size=1, entry="kvcache", **_lse),
    make_scenario("kvcache", "L8", "8q1s1000", suffix=["p4"], page_size=4, entry="kvcache", **_lse),
    make_scenario("prefill-varlen", "L8", "q300_q129", suffix=["varlen", "fp16"], kv_layout="varlen",
                  dtype="fp16", **_lse),
    # bf16 d128 prefill tiles for the persistent kernel: many short tiles, a flat grid, splits, no causal mask
    make_scenario("sliding-window", "L8", "q2000_q77", suffix=["p16", "w128"], window=(127, 0), **_lse),
    make_scenario("mixed", "L8", "q700_8q1s1200_q129s300", suffix=["p16"], **_lse),
    make_scenario("prefill-dense", "L8", "2q1000", suffix=["p16", "splits3"], num_splits=3, **_lse),
    make_scenario("prefill-varlen", "MHA", "16q512", suffix=["varlen", "noncausal"], kv_layout="varlen",
                  causal=False, **_lse),
    make_scenario("prefill-varlen", "OSS", "8q512_q77", suffix=["p16", "d64"], **_lse),
    # long d64 tiles: the 192-row tile (three consumer warpgroups) against no-m192's 128 rows; q heads per KV head
    # 8 and 5 (tiles that end inside a token's heads), sinks, a window past the persistent kernel's, softcap
    make_scenario("prefill-dense", "OSS", "q3500", suffix=["p16", "d64-m192"], **_lse),
    make_scenario("prefill-varlen", custom_heads(40, 8, 64), "q3500_q2900_q77", suffix=["varlen", "d64-g5"],
                  kv_layout="varlen", **_lse),
    make_scenario("sinks", "OSS", "q4000_q3000", suffix=["p16", "sinks", "w2048"], sinks=True,
                  window=(2047, 0), **_lse),
    make_scenario("softcap", custom_heads(16, 2, 64), "2q2000", suffix=["p64", "sc30", "fp16", "noncausal"],
                  page_size=64, softcap=30.0, dtype="fp16", causal=False, **_lse),
    # d64 decode: decode tile 3 (two CTAs per SM, three stages, the same block_n) against the table's tile. Two
    # query tokens a sequence (16 packed rows at GQA 8), so that decode tile 6 (keys as M, where the rows fit 8; not
    # bitwise the 64-row tiles) takes neither side
    make_scenario("decode-paged", "OSSt8", "256q2s1500_q2s77", suffix=["p16", "d64"], **_lse),
    make_scenario("sinks", "OSS", "8q2s3000", suffix=["p16", "sinks", "d64"], sinks=True, **_lse),
    # the kvcache append (rotary on K and q) and the cascade's merge: their rows loaded whole before the stores
    # (the default) against column by column (no-row-prefetch, entry 54)
    make_scenario("kvcache", "L8", "8q1s1500", suffix=["batched", "append", "rotary-interleaved"],
                  kv_layout="batched", entry="kvcache", append_new=True, rotary="interleaved", rotary_dim=64),
    make_scenario("kvcache", "L8", "8q2s1500", suffix=["p16", "append", "rotary-neox"], entry="kvcache",
                  append_new=True, rotary="neox", rotary_dim=128),
    make_scenario("lse", "L70t8", "16q4s900", suffix=["p16", "cascade-p512"], cascade_prefix=512,
                  entry="cascade", return_lse=False),
    # short prefills without LSE on the persistent kernels (d128 GQA 4, d64 GQA 8): entry 71's epilogue skips the
    # LSE's logarithm there
    make_scenario("prefill-varlen", "L8", "16q512_q77", suffix=["varlen", "nolse"], kv_layout="varlen"),
    make_scenario("prefill-varlen", "OSS", "8q512_q77", suffix=["p16", "d64", "nolse"]),
    # d192 / 128 (MLA) on a paged cache, 256 short tiles (entries 82, 85 ran it on a persistent kernel, since removed)
    make_scenario("prefill-dense", "MLAp16", "q2000", suffix=["p16", "d192x128"], **_lse),
    # ... and a sequence with no keys among them
    make_scenario("edge", "MLAp16", "q2000s2000_q3s0_q300s300", suffix=["p16", "d192x128", "zero-kv"], **_lse),
    # bf16 decodes of >= 1.5 waves of tiles for decode-persist (entry 83): d128 on the two-CTA tile (and on the
    # table's under no-cta2) with a keyless sequence, sinks, page 64; splits on the table's tile (partials)
    make_scenario("decode-paged", "L8", "64q1s1500_q1s0_q1s77", suffix=["p16", "zero-kv"], **_lse),
    make_scenario("sinks", "L70", "32q1s1300", suffix=["p64", "sinks"], page_size=64, sinks=True, **_lse),
    make_scenario("decode-splitkv", "L8", "32q1s3000", suffix=["p16", "splits4"], num_splits=4, **_lse),
    # 64 queries of one sequence in 6 splits: 2048 combined rows, the warp-per-row combine (entry 99's rule; entry
    # 117 launches it early)
    make_scenario("lse", "L8", "q64s3000", suffix=["p16", "warp-combine"], **_lse),
    # flat grids of more than a wave that begin with their longest sequence (entry 98: the one-tile kernel, 160
    # CTAs, launches from the first sequence; the persistent kernel keeps its order under every flat-order)
    make_scenario("edge", "L8", "q100s1000_16q1s77", suffix=["p256", "flat-first"], page_size=256, **_lse),
    make_scenario("mixed", "L8", "q2000_32q1s300", suffix=["p16", "flat-first"], **_lse),
    # the 192-row native e4m3 d64 tile (fp16 P*V) on the persistent kernel (the default since entry 99) against its
    # one-tile kernel (no-fp8-persist): windowed short tiles with per-(sequence, KV head) descales, and causal ones with sinks
    make_scenario("fp8", "OSS", "q3000", suffix=["p16", "w128", "persist"], dtype="e4m3", descale="random",
                  window=(127, 0), **_lse),
    make_scenario("fp8", "OSS", "2q1500", suffix=["p16", "sinks", "persist"], dtype="e4m3", descale="stride0",
                  sinks=True, **_lse),
    # ... and split three ways (the persistent kernel's split tiles write partials for the combine)
    make_scenario("fp8", "OSS", "q3000", suffix=["p16", "splits3", "persist"], dtype="e4m3", descale="random",
                  num_splits=3, **_lse),
]
EXPERIMENTS = ["cpasync", "3587", "no-persist", "no-m192", "1539", "tile=3", "tma-one-warp", "tma-warps=4",
               "no-persist192", "persist192-strict", "l2promo=256",
               # entry 53: launch order and the combine's load order only (split, kvcache and mixed cases above)
               "no-pdl-chain,no-pdl-trigger,fwd-pdl,no-combine-prefetch", "no-row-prefetch",
               # entry 113: the forward and merge launched plainly, no early triggers (the default: pdl-chain)
               "no-pdl-chain",
               # entry 117: the warp-per-row combine launched early, waiting before it reads the partials
               "warp-combine-pdl",
               # entry 64: the persistent kernel's tile numbers by run-time divisions (the default: multiply-shift)
               "no-tile-fastdiv",
               # entry 66: the one-tile grid's launch order (the same tiles, heaviest first across heads; by
               # default only on grids of up to 10 tiles a SM)
               "lpt", "lpt=8", "no-lpt",
               # entry 69: packed Q by tensor-map boxes (rows past a sequence hold its neighbour's queries, not
               # zeros): in every call that can (the default: where the sequences average a box), and never
               "q-tma", "no-q-tma",
               # entry 71: the tile tail before the lean one (masks, LSE, the epilogue's store loop), with and
               # without q-tma
               "no-lean-tail", "no-q-tma,no-lean-tail",
               # entry 70: two box-issuing warps on grids of few CTAs too (the splits8 decode: 16 CTAs)
               "no-tma-warps-few",
               # entry 76: block-table reads one block ahead, waited for before the current block's boxes (the
               # default: two ahead, waited for where used); the same boxes
               "kv-coords-early",
               # entry 81: the 192-row d64 tile's three warpgroups issue their GEMMs in turn (the same products in
               # the same order); its long d64 cases take the one-tile kernel, the short ones the persistent one
               "m192-turns",
               # entry 83: the bf16 decode tiles on their persistent kernel: the two-CTA tiles (and the table's under
               # splits), and the d64 table's tile (same block_n as its two-CTA one; d128's one-CTA tile has block_n
               # 128 against the two-CTA tile's 64, so no-cta2 is not bitwise and is checked by the evaluator)
               "decode-persist", "decode-persist,no-d64-cta2",
               # entry 98: a flat grid's tiles from the last sequence (0) and from the first (2), against the
               # default's choice by the first and last sequences' lengths: the same tiles in another order
               "flat-order=0", "flat-order=2",
               # entry 99: the 192-row native e4m3 d64 tile on its one-tile kernel (the same tiles' arithmetic)
               "no-fp8-persist",
               # entry 109: the long prefill tiles' masking decided from the unmasked blocks' range (an exact
               # rewrite of the per-block test), with and without the persistent kernel
               "mask-range", "mask-range,no-persist",
               # entry 110: and without the proxy fence on the blocks the TMA producer loaded
               "mask-range,tma-no-fence",
               # entry 112: the d64 tile's per-block mask test (the default: mask-range on that tile)
               "no-mask-range-d64"]


def _outputs(seed, windowed):
    """{case name: (out, lse)} of the windowed cases (or the others) on inputs from `seed`, as int16 / int32 bit
    patterns on the CPU."""
    result = {}
    for s in CASES:
        if _windowed(s) != windowed:
            continue
        out, lse = call_flashseek(s, make_inputs(s, "cuda", seed=seed))
        torch.cuda.synchronize()
        result[s.name] = (out.contiguous().view(torch.int16).cpu(),
                          None if lse is None else lse.contiguous().view(torch.int32).cpu())
    return result


_children = {}

# A windowed case's key blocks start at a tile's first visible key (entry 102), rounded to the producer's TMA box
# rows, and a bf16 d64 window that fits one block takes the 176-key tile (entry 103): both depend on the tile's rows,
# the producer and the kernel, which many experiments change on purpose (cpasync, no-m192, no-persist192). So the
# windowed cases compare each experiment with blocks from key 0 on the 128-key tiles on both sides; what the
# experiment changes must still leave the bits alone. The key origin itself is tested in test_window_origin.py.
KEY_BLOCKS_PINNED = "no-window-origin,no-d64-window-tile"


def _windowed(scenario):
    return tuple(scenario.window) != (-1, -1)


def _child_outputs(experiment, windowed=False):
    """The windowed cases' (or the others') outputs under experiment's tokens on top of this process's (one child
    process per experiment and kind)."""
    key = (experiment, windowed)
    if key not in _children:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "outputs.pt"
            env = dict(os.environ, FLASHSEEK_EXPERIMENT=experiment_on_top(experiment))
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(path), str(session_seed()),
                                   "windowed" if windowed else "plain"],
                                  env=env, capture_output=True, text=True, timeout=240)
            assert proc.returncode == 0, (f"child under {experiment} failed:\n{proc.stdout[-2000:]}\n"
                                          f"{proc.stderr[-3000:]}")
            _children[key] = torch.load(path)
    return _children[key]


_defaults = {}


def _default_outputs(scenario, seed):
    """The default's (out bits, LSE bits, reference LSE) for a case, checked against the fp32 reference once per
    case (the check does not depend on the experiment it is compared with: 46 cases x 34 experiments ran it 1564
    times, most of the GPU tests' time). A case that fails its check fails every comparison, uncached."""
    if scenario.name not in _defaults:
        run = run_scenario(scenario, "cuda", seed)
        assert_passes(scenario, run.result, seed)
        out, lse = call_flashseek(scenario, make_inputs(scenario, "cuda", seed=seed))
        torch.cuda.synchronize()
        _defaults[scenario.name] = (out.contiguous().view(torch.int16).cpu(),
                                    None if lse is None else lse.contiguous().view(torch.int32).cpu(),
                                    None if run.ref.lse is None else run.ref.lse.float().cpu())
    return _defaults[scenario.name]


# Under pytest-xdist (scripts/gpu-run.sh tests-par: --dist loadgroup) an experiment's tests share one worker, so
# its child process runs once.
@pytest.mark.parametrize("experiment", [pytest.param(e, marks=pytest.mark.xdist_group(e)) for e in EXPERIMENTS])
@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_default_matches_experiment_bitwise(scenario, experiment):
    got, got_lse, ref_lse_fp32 = _default_outputs(scenario, session_seed())
    if _windowed(scenario):
        got, got_lse = _child_outputs(KEY_BLOCKS_PINNED, windowed=True)[scenario.name]
        ref_out, ref_lse = _child_outputs(f"{KEY_BLOCKS_PINNED},{experiment}", windowed=True)[scenario.name]
    else:
        ref_out, ref_lse = _child_outputs(experiment)[scenario.name]
    differ = (got != ref_out).sum().item()
    assert differ == 0, f"{scenario.name}: {differ} of {got.numel()} output elements differ under {experiment}"
    if ref_lse is not None:
        assert torch.equal(got_lse, ref_lse), _lse_difference(scenario, got_lse, ref_lse, ref_lse_fp32, experiment)


def _lse_difference(scenario, got_bits, exp_bits, ref_lse, experiment):
    """Where the two LSEs differ, with the fp32 reference beside them and whether the experiment's passes the LSE
    rule: says which side is wrong, or that both are right and only the rounding differs."""
    got, exp = got_bits.view(torch.float32), exp_bits.view(torch.float32)
    ref = ref_lse.float().cpu()
    where = (got_bits != exp_bits).nonzero()
    diff = (got - exp).abs()[got_bits != exp_bits]
    ok, err, bound, reason = lse_rule(exp, ref, scenario.softcap)
    lines = [f"{scenario.name}: LSE differs under {experiment} in {where.shape[0]} of {got.numel()} (head, token) "
             f"entries, max |diff| {diff.max().item():.3g}; experiment's LSE against the reference: "
             f"{'passes' if ok else 'FAILS: ' + reason}"]
    for h, t in where[:8].tolist():
        lines.append(f"  ({h}, {t}): default {got[h, t].item():.9g} experiment {exp[h, t].item():.9g} "
                     f"reference {ref[h, t].item():.9g}")
    return "\n".join(lines)


if __name__ == "__main__":  # the child, under FLASHSEEK_EXPERIMENT: python test_tma_producer.py OUT SEED windowed|plain
    torch.save(_outputs(int(sys.argv[2]), windowed=sys.argv[3] == "windowed"), sys.argv[1])
