"""The bf16 d128 decode tile, whichever FLASHSEEK_EXPERIMENT selects (tile=N / cta2 / bn64s6, docs/perf-log.md
entry 10; unset: the tile table's tile): the planner reports the variant's block_n, and decode shapes that cover its
paths (several key blocks, a partial last block, splits, causal q > 1, sinks, LSE) pass the reference check.
Run under a variant with `scripts/gpu-run.sh build tests-exp:cta2` (this file, test_splits.py and the decode
families of test_families.py under that value)."""

import os

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402


def _expected_block_n():
    tokens = [t for t in os.environ.get("FLASHSEEK_EXPERIMENT", "").split(",") if t]
    # the 4q1s4k call below splits: the two-CTA keys-as-M tile 7 in twice the splits (kam2-splits, entry 118)
    variant = 7
    for t in tokens:
        if t == "cta2":
            variant = 1
        elif t == "bn64s6":
            variant = 2
        elif t.startswith("tile="):
            variant = int(t[5:])
        elif t in ("no-kam2-splits", "no-keys-as-m") and variant == 7:
            variant = 0  # tile 5 (block_n 128) or the table's tile
    return {1: 64, 2: 64, 4: 64, 7: 64}.get(variant, 128)  # tile 4: block_n 64 since entry 89


def test_planner_reports_the_selected_decode_tile():
    seqlens = torch.full((4,), 4096, dtype=torch.int32, device="cuda")
    md = flashseek.get_scheduler_metadata(4, 1, 4096, 32, 8, 128, seqlens, qkv_dtype=torch.bfloat16, page_size=16)
    header = md[:8].tolist()
    assert header[2] == 64, f"block_m {header[2]}"
    assert header[3] == _expected_block_n(), (
        f"block_n {header[3]} under FLASHSEEK_EXPERIMENT={os.environ.get('FLASHSEEK_EXPERIMENT')!r}")
    # Other dtypes and head dims keep the tile table's tiles.
    md16 = flashseek.get_scheduler_metadata(4, 1, 4096, 32, 8, 128, seqlens, qkv_dtype=torch.float16, page_size=16)
    assert md16[:8].tolist()[3] == 128


_common = dict(out_given=False, return_lse=True)
CASES = [
    make_scenario("decode-paged", "L8", "64q1s2k", suffix=["p16"], **_common),
    make_scenario("decode-paged", "L70", "8q1s1k", suffix=["p16"], **_common),
    make_scenario("decode-paged", "L70t8", "q1s1000_q1s1_q1s64_q1s65_q1s129", suffix=["p16"], **_common),
    make_scenario("decode-splitkv", "L70t8", "q1s32k_q1s3_q1s5000", suffix=["p16", "splits0"], **_common),
    make_scenario("decode-splitkv", "L8", "4q1s16k", suffix=["p16", "splits32"], num_splits=32, **_common),
    make_scenario("spec-decode", "L8", "16q4s4k", suffix=["p16"], **_common),
    make_scenario("sinks", "L8", "8q1s2k", suffix=["p16", "sinks"], sinks=True, **_common),
    make_scenario("decode-paged", "L8", "16q1s2k", suffix=["p128"], page_size=128, **_common),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_decode_tile_passes_reference(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)
