"""The evaluator's power states (flashseek/eval/timing.py measure): which of a call's host-time loop and its
timing runs first. The loop takes the GPU to its power cap, so the order decides the clock a call is timed at."""
import pytest

pytest.importorskip("torch", reason="the evaluator's timing module needs torch")

from flashseek.eval.timing import DeviceTimer, measure  # noqa: E402


class RecordingTimer:
    """DeviceTimer's interface, recording the order of its loops (no device)."""

    def __init__(self, power_state):
        self.power_state = power_state
        self.log = []

    def host_us(self, fn, min_calls=10, max_calls=200, budget_s=0.3):
        self.log.append(("host loop", max_calls))
        return 3.0 if max_calls <= 3 else 12.0

    def time(self, fn, mode, host_us=None):
        self.log.append(("timing", mode, host_us))
        return "timing", "last result"


def test_sustained_times_a_call_right_after_its_host_loop():
    timer = RecordingTimer("sustained")
    assert measure(timer, lambda: None, "graph") == (12.0, "timing", "last result")
    assert timer.log == [("host loop", 200), ("timing", "graph", 12.0)]
    # the runner's host-floor loop runs first: nothing comes between a call's host loop and its timing, for ours as
    # for the baselines (which have no floor loop)
    timer = RecordingTimer("sustained")
    measure(timer, lambda: None, "graph", between=lambda: timer.log.append("floor"))
    assert timer.log == ["floor", ("host loop", 200), ("timing", "graph", 12.0)]


def test_settled_times_a_call_before_its_host_loop_on_a_few_calls_estimate():
    timer = RecordingTimer("settled")
    assert measure(timer, lambda: None, "eager") == (12.0, "timing", "last result")
    assert timer.log == [("host loop", 3), ("timing", "eager", 3.0), ("host loop", 200)]
    timer = RecordingTimer("settled")
    measure(timer, lambda: None, "eager", between=lambda: timer.log.append("floor"))
    assert timer.log == [("host loop", 3), ("timing", "eager", 3.0), ("host loop", 200), "floor"]


def test_a_timer_without_a_power_state_is_sustained():
    class Plain(RecordingTimer):
        def __init__(self):
            self.log = []

    timer = Plain()
    measure(timer, lambda: None, "eager")
    assert timer.log[0] == ("host loop", 200)


def test_an_unknown_power_state_is_refused_by_name():
    with pytest.raises(ValueError, match="power_state"):
        DeviceTimer(device="cpu", power_state="hot")
