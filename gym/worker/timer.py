"""The one timer both sides use: the worker times the candidate with it and the
trusted side times the reference (eager and torch.compile) with it, through the
same `timed_call`, so the two figures are measured the same way.

On a GPU it does what `triton.testing.do_bench` does for each sample: zero an
L2-sized buffer (outside the interval), record a start event, make the call,
record an end event, and only then synchronise and read the elapsed time. The
events are created (and their CUDA events materialised) ahead of time, and the
caller's trace is entered before the start event, so neither costs the
interval. Work launched on another stream or device is not waited for here: the
worker's launch hook flags it instead (`side_stream_launch`). On CPU: the host
clock around the call (`interpreted` timings).

The clock, the sync and the event class are captured when this module is
imported, before any submission code runs, so patching them later changes
nothing here.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

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
        _cuda_synchronize(device)


class CallTimer:
    """Times one call at a time: `flush()`, then `start()`, the call, `stop()`; `seconds()` reads the sample.

    `events` makes the CUDA event pair (tests inject fakes); `flush_buffer` the L2 flush buffer."""

    def __init__(self, device: torch.device, events: Callable[[], Any] | None = None, flush_buffer: Any | None = None) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self._started = self._stopped = 0.0
        if self.cuda:
            self.flush_buffer = flush_buffer if flush_buffer is not None else torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device)
            make = events or (lambda: _CudaEvent(enable_timing=True))
            self._start, self._end = make(), make()
            # torch creates an event's CUDA event at its first record: do it now, not inside a sample.
            self._start.record()
            self._end.record()
            self._end.synchronize()

    def flush(self) -> None:
        """Evict the L2 cache (GPU); queued on the stream, so it completes before the start event."""
        if self.cuda:
            self.flush_buffer.zero_()

    def start(self) -> None:
        if self.cuda:
            self._start.record()
        else:
            self._started = now()

    def stop(self) -> None:
        if self.cuda:
            self._end.record()
        else:
            self._stopped = now()

    def seconds(self) -> float:
        """The last sample: waits for the end event (GPU), then start → end in seconds."""
        if self.cuda:
            self._end.synchronize()
            return float(self._start.elapsed_time(self._end)) / 1e3
        return self._stopped - self._started


def timed_call(timer: CallTimer, call: Callable[[], Any], context: contextlib.AbstractContextManager[Any] | None = None) -> tuple[Any, float]:
    """(call(), seconds): flush, enter `context` (the worker's op trace), start, call, stop, leave, read.

    If the call raises, the exception propagates (the context has seen it)."""
    timer.flush()
    with context if context is not None else contextlib.nullcontext():
        timer.start()
        result = call()
        timer.stop()
    return result, timer.seconds()


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


def time_each(run: Callable[[Any], Any], argsets: Iterator[Any], device: torch.device, timer: CallTimer | None = None) -> list[float]:
    """Seconds of `run(args)` for each argset `argsets` yields (made one at a time, outside
    the interval, so only one call's inputs are alive at once), one `timed_call` each."""
    timer = timer or CallTimer(device)
    samples: list[float] = []
    for args in argsets:
        result, seconds = timed_call(timer, functools.partial(run, args))
        del result
        samples.append(seconds)
        del args
    return samples
