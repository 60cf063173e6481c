"""tests/gpu/gpu_support.experiment_on_top: a GPU test's child process runs its experiment on top of the session's
FLASHSEEK_EXPERIMENT tokens, so a test session run under a token compares against that token's plans."""
import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "gpu_support_under_test", Path(__file__).resolve().parents[1] / "gpu" / "gpu_support.py")


@pytest.fixture
def gpu_support():
    module = importlib.util.module_from_spec(_SPEC)
    _SPEC.loader.exec_module(module)  # imports flashseek, which imports without its compiled extension
    return module


def test_the_sessions_tokens_come_first(gpu_support, monkeypatch):
    monkeypatch.setenv("FLASHSEEK_EXPERIMENT", "kam2-splits")
    # a later token overrides an earlier one in the library's parser, so the experiment's own tokens win
    assert gpu_support.experiment_on_top("no-m192,tile=3") == "kam2-splits,no-m192,tile=3"


def test_no_session_tokens_leave_the_experiment_alone(gpu_support, monkeypatch):
    monkeypatch.delenv("FLASHSEEK_EXPERIMENT", raising=False)
    assert gpu_support.experiment_on_top("no-m192") == "no-m192"
    monkeypatch.setenv("FLASHSEEK_EXPERIMENT", "")
    assert gpu_support.experiment_on_top("a,,b") == "a,b"
    assert gpu_support.experiment_on_top("") == ""
