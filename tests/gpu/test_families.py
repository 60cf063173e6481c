"""Random small cases of every family of grid.md section 1 except fp8 and mla (drawn from the printed seed), plus
the fixed edge family of the performance grid (zero-length entries, total_k = 0, NaN tails at page 128 and 256,
d 40/72/80, page 1 and 48, HND, strided q and block table, Sq > Sk, > 992 sequences, a 32768-block cache)."""

import os

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402

from flashseek.testing.grid import performance_grid, select  # noqa: E402
from flashseek.testing.randomized import random_scenarios  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

PER_FAMILY = int(os.environ.get("FLASHSEEK_TEST_RANDOM_PER_FAMILY", "4"))
RANDOM = random_scenarios(session_seed(), PER_FAMILY)
FIXED = select(performance_grid(), families=["edge"])


@pytest.mark.parametrize("scenario", RANDOM, ids=[s.name for s in RANDOM])
def test_random_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.parametrize("scenario", FIXED, ids=[s.name for s in FIXED])
def test_fixed_edge_case(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)
