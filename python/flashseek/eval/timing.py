"""Device time per call, as METHOD.md asks: CUDA events around the region, warm-up first, the median of many
repeats, cold L2, and CUDA-graph replay where the engine replays graphs.

Each repeat: the GPU is first kept busy (torch.cuda._sleep, long enough to cover the host cost of launching the
call, so launch gaps do not leak into eager timings), then a 256 MB buffer is zeroed (evicting the 60 MB L2, outside
the timed region), then start event, the call (or one graph replay), end event. Spread: half the interquartile range
of the repeats (robust to one preempted sample); min and max are kept too.

Host time per call: wall time of a loop of back-to-back eager calls divided by their number (it is the larger of
the host's and the device's cost per call: compare it with the device time to see which one bounds).

Power state (`measure`): the host loop runs a call back to back for 0.3 s, which takes an H200 to its power cap
(SM clock 1980 -> 1665-1900 MHz, the more power-hungry kernel the lower; scripts/variance_probe.py, perf-log entry
87). "sustained" (the default so far) times each call right after its own host loop: each kernel at the clock its
own sustained run settles to. "settled" times it first, after an idle pause, then runs the host loop: each kernel
from the same cool state, at the clock it starts at.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

import torch

from flashseek.eval.stats import median, spread

FLUSH_BYTES = 256 << 20
SM_CLOCK_GHZ = 1.98  # for sizing torch.cuda._sleep; only needs to be roughly right
POWER_STATES = ("sustained", "settled")
# The idle pause before a settled timing: the clock readings 10-30 ms after a timing that followed the host loop
# were back at 1890-1965 MHz (entry 87).
SETTLE_SECONDS = 0.05


@dataclass
class Timing:
    us: float
    us_spread: float
    us_min: float
    us_max: float
    repeats: int
    mode: str  # "graph" or "eager"
    note: str = ""
    samples: List[float] = field(default_factory=list)


def event_times_us(fn: Callable[[], Any], repeats: int, warmup: int = 3) -> List[float]:
    """Plain event timing of back-to-back calls (for the ceilings, where the work dwarfs any launch gap)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e3)
    return out


def capture_graph(fn: Callable[[], Any]) -> Tuple["torch.cuda.CUDAGraph", Any]:
    """Warm up on a side stream (lazy initialisation must not happen during capture), then capture one call."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = fn()
    torch.cuda.synchronize()
    return graph, result


def measure(timer, fn: Callable[[], Any], mode: str,
            between: Optional[Callable[[], Any]] = None) -> Tuple[float, "Timing", Any]:
    """(host_us, Timing, the last timed call's result), the host loop and the timing in the order the timer's
    power state asks (module docstring). `between` (the runner's host-floor loop, ours only) runs beside the host
    loop but never between it and the timing: when sustained it runs first, so that ours is timed right after its
    own host loop as the baselines are (until perf-log entry 116 it ran in between: 0.3 s of a near-idle GPU
    before our timing and none before theirs)."""
    if getattr(timer, "power_state", "sustained") == "settled":
        # the sleep before each repeat covers the host's launch cost: a few calls estimate it without heating
        estimate = timer.host_us(fn, min_calls=3, max_calls=3, budget_s=0.0)
        t, last = timer.time(fn, mode, host_us=estimate)
        host = timer.host_us(fn)
        if between is not None:
            between()
        return host, t, last
    if between is not None:
        between()
    host = timer.host_us(fn)
    t, last = timer.time(fn, mode, host_us=host)
    return host, t, last


class DeviceTimer:
    def __init__(self, device="cuda", repeats: int = 30, warmup: int = 3, max_seconds: float = 3.0,
                 power_state: str = "sustained"):
        if power_state not in POWER_STATES:
            raise ValueError(f"power_state must be one of {POWER_STATES}, got {power_state!r}")
        self.flush_buf = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=device)
        self.repeats, self.warmup, self.max_seconds = repeats, warmup, max_seconds
        self.power_state = power_state

    def flush_l2(self):
        self.flush_buf.zero_()

    def host_us(self, fn: Callable[[], Any], min_calls: int = 10, max_calls: int = 200,
                budget_s: float = 0.3) -> float:
        """Wall time per call of back-to-back eager calls (synchronised once at the end)."""
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        one = max(time.perf_counter() - t0, 1e-6)
        n = int(min(max_calls, max(min_calls, budget_s / one)))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e6

    def time(self, fn: Callable[[], Any], mode: str, host_us: Optional[float] = None) -> Tuple[Timing, Any]:
        """(Timing, the result of the last timed call). mode 'graph' replays a captured graph (falling back to
        eager, with a note, when capture fails); 'eager' calls fn."""
        note = ""
        run, result = fn, None
        if mode == "graph":
            try:
                graph, result = capture_graph(fn)
                run = graph.replay
            except Exception as exc:  # a call that cannot be captured is a finding: say so, time it eagerly
                torch.cuda.synchronize()
                note = f"graph capture failed ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); timed eager"
                mode = "eager"
        for _ in range(self.warmup):
            r = run()
            if run is fn:
                result = r
        torch.cuda.synchronize()
        # a single call's cost sets how many repeats fit in the time budget
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        one_s = time.perf_counter() - t0
        repeats = int(max(5, min(self.repeats, self.max_seconds / max(one_s, 1e-6))))
        sleep_cycles = int((2.0 * (host_us or 50.0) + 20.0) * 1e3 * SM_CLOCK_GHZ)
        if self.power_state == "settled":
            time.sleep(SETTLE_SECONDS)  # the device is idle here (synchronized above)
        events = []
        for _ in range(repeats):
            torch.cuda._sleep(sleep_cycles)  # keep the GPU busy while the host enqueues what follows
            self.flush_l2()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            r = run()
            end.record()
            if run is fn:
                result = r
            events.append((start, end))
        torch.cuda.synchronize()
        samples = [s.elapsed_time(e) * 1e3 for s, e in events]
        return Timing(us=median(samples), us_spread=spread(samples), us_min=min(samples), us_max=max(samples),
                      repeats=repeats, mode=mode, note=note, samples=samples), result
