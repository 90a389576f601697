"""Timing of the reference on the trusted side, matching how the worker times
the candidate (one fresh input set per timed call; CUDA events after an L2
flush on a GPU, the host clock between syncs on CPU), and the statistics both
are summarised with.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


L2_FLUSH_BYTES = 256 << 20


def warm_up(run: Callable[[Any], Any], make_args: Callable[[], Any], device: torch.device, seconds: float, max_runs: int = 1000) -> int:
    """Untimed runs on fresh `make_args()` until `seconds` pass (at least one); how many ran."""
    runs = 0
    started = time.perf_counter()
    while True:
        run(make_args())
        _synchronize(device)
        runs += 1
        if time.perf_counter() - started >= seconds or runs >= max_runs:
            return runs


def time_each(run: Callable[[Any], Any], argsets: list[Any], device: torch.device, warmup: int = 1) -> list[float]:
    """Seconds of `run(args)` for each argset, timed the way the worker times the
    candidate (gym.worker.CallTimer): on a GPU, CUDA events after an L2 flush with
    a device-wide sync before the end event; on CPU, the host clock between two
    syncs. `warmup` untimed runs on the first argset come first (0: none)."""
    for _ in range(min(warmup, len(argsets))):
        run(argsets[0])
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device) if device.type == "cuda" else None
    samples: list[float] = []
    for args in argsets:
        if flush is not None:
            flush.zero_()
            torch.cuda.synchronize()
            start_event, end_event = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start_event.record()
            run(args)
            torch.cuda.synchronize()
            end_event.record()
            end_event.synchronize()
            samples.append(start_event.elapsed_time(end_event) / 1e3)
            continue
        _synchronize(device)
        start = time.perf_counter()
        run(args)
        _synchronize(device)
        samples.append(time.perf_counter() - start)
    return samples


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median_rse(samples: list[float]) -> float | None:
    """Relative standard error of the median: sqrt(pi/2) * stdev / sqrt(n) / median
    (the large-sample standard error of a median); None with fewer than two samples."""
    median = statistics.median(samples)
    if len(samples) < 2 or median <= 0:
        return None
    return math.sqrt(math.pi / 2) * statistics.stdev(samples) / math.sqrt(len(samples)) / median


def summarize(samples: list[float]) -> dict[str, float | int | None]:
    """Summary statistics of timing samples (seconds), keyed as TimingSummary's fields."""
    return {
        "median_s": statistics.median(samples),
        "mean_s": statistics.fmean(samples),
        "p10_s": quantile(samples, 0.1),
        "p90_s": quantile(samples, 0.9),
        "min_s": min(samples),
        "rse": median_rse(samples),
        "reps": len(samples),
    }
