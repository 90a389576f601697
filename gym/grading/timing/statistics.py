"""The statistics timing samples are summarised with (candidate and reference alike).

The timer itself is `gym.worker.timer`, shared by the worker and the trusted side.
"""

from __future__ import annotations

import math
import statistics
from typing import TypedDict


class SampleSummary(TypedDict):
    """summarize()'s result: TimingSummary's fields, so `TimingSummary(**summary)` type-checks."""

    median_s: float
    mean_s: float
    p10_s: float
    p90_s: float
    min_s: float
    rse: float | None
    reps: int


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


def summarize(samples: list[float]) -> SampleSummary:
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
