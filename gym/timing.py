"""The timing loop shared by the worker (candidate) and the grader (reference).

On a GPU each run is bracketed by CUDA events after a device-wide sync; on
CPU a host timer is used and the figures are labelled `interpreted`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_runs(run: Callable[[], Any], device: torch.device, reps: int, warmup: int = 1) -> list[float]:
    """Seconds per call of `run()` over `reps` timed calls, after `warmup` untimed ones."""
    for _ in range(warmup):
        run()
    _synchronize(device)
    samples: list[float] = []
    for _ in range(reps):
        if device.type == "cuda":
            start_event = torch.cuda.Event(enable_timing=True)
            end_event = torch.cuda.Event(enable_timing=True)
            _synchronize(device)
            start_event.record()
            run()
            end_event.record()
            _synchronize(device)
            samples.append(start_event.elapsed_time(end_event) / 1000.0)
        else:
            start = time.perf_counter()
            run()
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


def summarize(samples: list[float]) -> dict[str, float]:
    return {
        "median_s": statistics.median(samples),
        "mean_s": statistics.fmean(samples),
        "p10_s": quantile(samples, 0.1),
        "p90_s": quantile(samples, 0.9),
        "min_s": min(samples),
        "reps": float(len(samples)),
    }
