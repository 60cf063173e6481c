"""Shared by the GPU test modules: the skip guard, the seed, an assertion that prints everything needed to
replay a failure, and the rerun of a module under a FLASHSEEK_EXPERIMENT value (read once per process)."""

import importlib.util
import os
import subprocess
import sys

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


# Where pytest-timeout is installed, a case of a rerun module fails after 120 s instead of a hung kernel holding the
# GPU run.
_CASE_TIMEOUT = (["--timeout=120", "--timeout-method=thread"]
                 if importlib.util.find_spec("pytest_timeout") else [])


def running_under(values) -> bool:
    """Whether this process runs under one of the FLASHSEEK_EXPERIMENT tokens in values (a module rerun by
    rerun_module_under), so that it does not rerun itself."""
    return bool(set(values) & set(os.environ.get("FLASHSEEK_EXPERIMENT", "").split(",")))


def experiment_on_top(experiment: str) -> str:
    """This process's FLASHSEEK_EXPERIMENT tokens, then experiment's (a later token overrides an earlier one): a
    child process runs the experiment on this process's default, so that a whole test session run under a token
    (`env:FLASHSEEK_EXPERIMENT=... tests-par`) compares and reruns against that token's plans, not the library's."""
    own = os.environ.get("FLASHSEEK_EXPERIMENT", "")
    return ",".join(t for t in own.split(",") + experiment.split(",") if t)


def rerun_module_under(module_file: str, experiment: str):
    """Runs the test module at module_file in a subprocess under experiment's FLASHSEEK_EXPERIMENT tokens (on top of
    this process's), with this session's seed; fails with the tail of its output if any case fails."""
    env = dict(os.environ, FLASHSEEK_EXPERIMENT=experiment_on_top(experiment), FLASHSEEK_TEST_SEED=str(session_seed()))
    proc = subprocess.run([sys.executable, "-m", "pytest", os.path.abspath(module_file), "-q", "-x",
                           "-p", "no:cacheprovider", *_CASE_TIMEOUT],
                          env=env, capture_output=True, text=True, timeout=300)
    tail = "\n".join(proc.stdout.splitlines()[-30:])
    assert proc.returncode == 0, f"FLASHSEEK_EXPERIMENT={experiment}: module failed\n{tail}\n{proc.stderr[-2000:]}"
