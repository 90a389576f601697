"""Timing statistics on known synthetic samples."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym.result import TimingSummary
from gym.timing import median_rse, quantile, summarize


def test_summary_of_known_samples() -> None:
    samples = [1.0, 2.0, 3.0, 4.0, 100.0]
    summary = TimingSummary(**summarize(samples))
    assert summary.median_s == 3.0
    assert summary.mean_s == 22.0
    assert summary.min_s == 1.0
    assert summary.p10_s == pytest.approx(1.4)
    assert summary.p90_s == pytest.approx(61.6)
    assert summary.reps == 5
    assert summary.rse == pytest.approx(math.sqrt(math.pi / 2) * statistics.stdev(samples) / math.sqrt(5) / 3.0)


def test_rse_needs_two_samples_and_shrinks_with_more() -> None:
    assert median_rse([1.0]) is None
    noisy = [1.0, 1.2] * 5
    assert median_rse(noisy * 10) < median_rse(noisy)
    assert median_rse([2.0] * 8) == 0.0


@given(st.lists(st.floats(min_value=1e-6, max_value=1e3), min_size=1, max_size=50))
def test_quantiles_are_ordered_and_within_range(samples: list[float]) -> None:
    low, mid, high = quantile(samples, 0.1), quantile(samples, 0.5), quantile(samples, 0.9)
    assert min(samples) <= low <= mid <= high <= max(samples)
    assert mid == pytest.approx(statistics.median(samples))


def test_bench_mode_times_the_first_benchmark_shape() -> None:
    import torch

    from gym.task_loader import find_task
    from gym.trials import plan_trials, timed_trial

    task = find_task("l1/vector_add")
    plain = plan_trials(task, torch.device("cpu"), secret=1, timing_reps=2)
    assert timed_trial(plain) is plain[0]
    bench = plan_trials(task, torch.device("cpu"), secret=1, timing_reps=2, bench=True)
    trial = timed_trial(bench)
    assert trial is bench[-1] and trial.label.endswith("bench #1") and trial.shape == task.spec.shapes.bench[0]
    timed = [plan for plan in trial.calls if plan.role == "timed"]
    assert len(timed) == 2 and not torch.equal(timed[0].args["x"], timed[1].args["x"])
