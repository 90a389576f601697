"""Timing of the reference on the trusted side, matching how the worker times
the candidate: a host timer, with a device-wide sync before the clock starts and
before it stops, one fresh input set per timed call.
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


def time_each(run: Callable[[Any], Any], argsets: list[Any], device: torch.device, warmup: int = 1) -> list[float]:
    """Seconds of `run(args)` for each argset, device-synchronised on both ends
    (the same way the worker times the candidate), after `warmup` untimed runs."""
    for _ in range(min(warmup, len(argsets))):
        run(argsets[0])
    samples: list[float] = []
    for args in argsets:
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


def summarize(samples: list[float]) -> dict[str, float]:
    return {
        "median_s": statistics.median(samples),
        "mean_s": statistics.fmean(samples),
        "p10_s": quantile(samples, 0.1),
        "p90_s": quantile(samples, 0.9),
        "min_s": min(samples),
        "reps": float(len(samples)),
    }
