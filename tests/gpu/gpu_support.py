"""Shared by the GPU test modules: the skip guard, the seed, and an assertion that prints everything needed to
replay a failure."""

import os

import pytest

import flashseek


def require_kernels():
    """Skip the calling module (at import) when the kernels cannot run here, with the library's reason."""
    reason = flashseek.unavailable_reason()
    if reason is not None:
        pytest.skip(f"flashseek kernels unavailable: {reason}", allow_module_level=True)


def session_seed() -> int:
    return int(os.environ.get("FLASHSEEK_TEST_SEED", "1"))


def assert_passes(scenario, result, seed):
    assert result.correct, (f"{scenario.name} (seed {seed}, FLASHSEEK_TEST_SEED={session_seed()}): {result.summary()}"
                            f"\n  scenario: {scenario}")
