"""The one timer both sides use: the worker times the candidate with it and the
trusted side times the reference (eager and torch.compile) with it, so the two
figures are measured the same way.

On a GPU: CUDA events on the launching stream after an L2 flush, with a
device-wide sync before the end event (work on side streams counts). On CPU:
the host clock between two syncs (`interpreted` timings). The clock, the sync
and the event class are captured when this module is imported, before any
submission code runs, so patching them later changes nothing here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import torch

now = time.perf_counter
_cuda_synchronize = torch.cuda.synchronize
_CudaEvent = torch.cuda.Event

# Larger than the L2 of any GPU in the speed-of-light table (256 MiB): zeroed before every timed call.
L2_FLUSH_BYTES = 256 << 20
# The warm-up's repetition cap, whatever its time budget.
MAX_WARMUP_RUNS = 1000


def synchronize(device: torch.device) -> None:
    """Wait for all work on `device` (a no-op on CPU)."""
    if device.type == "cuda":
        _cuda_synchronize()


class CallTimer:
    """Times one call at a time: `started = timer.start()`, the call, `timer.stop(started)` in seconds."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device) if device.type == "cuda" else None

    def start(self) -> Any:
        synchronize(self.device)
        if self.flush is not None:
            self.flush.zero_()
            _cuda_synchronize()
            event = _CudaEvent(enable_timing=True)
            event.record()
            return event
        return now()

    def stop(self, started: Any) -> float:
        if self.flush is not None:
            _cuda_synchronize()
            end = _CudaEvent(enable_timing=True)
            end.record()
            end.synchronize()
            return float(started.elapsed_time(end)) / 1e3
        synchronize(self.device)
        return cast(float, now() - started)  # started is now()'s float here


def warm_up(step: Callable[[], bool], seconds: float, max_runs: int = MAX_WARMUP_RUNS) -> int:
    """Call `step()` until `seconds` pass (at least once) or `max_runs` is reached, or until
    `step()` returns False (it failed: that run is not counted). Returns the runs that succeeded."""
    runs = 0
    started = now()
    while True:
        if not step():
            return runs
        runs += 1
        if now() - started >= seconds or runs >= max_runs:
            return runs


def time_each(run: Callable[[Any], Any], argsets: list[Any], device: torch.device) -> list[float]:
    """Seconds of `run(args)` for each argset, one CallTimer sample per call."""
    timer = CallTimer(device)
    samples: list[float] = []
    for args in argsets:
        started = timer.start()
        run(args)
        samples.append(timer.stop(started))
    return samples
