"""Timing statistics on known synthetic samples."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym.grading.options import GradeOptions
from gym.grading.timing.statistics import median_rse, quantile, summarize
from gym.schema.result import TimingSummary


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

    from gym.grading.planning.plan import TimingRequest, plan_trials, timed_trial
    from gym.tasks.loader import find_task

    task = find_task("l1/vector_add")
    plain = plan_trials(task, torch.device("cpu"), secret=1, timing=TimingRequest(reps=2))
    assert timed_trial(plain) is plain[0]
    bench = plan_trials(task, torch.device("cpu"), secret=1, timing=TimingRequest(reps=2, bench=True))
    trial = timed_trial(bench)
    assert trial is bench[-1] and trial.label.endswith("bench #1") and trial.shape == task.spec.shapes.bench[0]
    timed = [plan for plan in trial.calls if plan.role == "timed"]
    assert len(timed) == 2 and not torch.equal(timed[0].args["x"], timed[1].args["x"])


# ---------------------------------------------------------------- the stopping rule

from gym.grading.timing.timing_policy import StopReason, TimingPolicy, next_round_size, stop_reason  # noqa: E402


def policy(**overrides: float) -> TimingPolicy:
    values = {"min_reps": 4, "max_reps": 32, "budget_s": 10.0, "target_rse": 0.01}
    values.update(overrides)
    return TimingPolicy(**values)


def test_stops_when_the_rse_target_is_met() -> None:
    steady = [1.0, 1.001, 0.999, 1.0]
    assert median_rse(steady) < 0.01
    assert stop_reason(steady, policy(), spent_s=0.0) == StopReason.rse_target


def test_goes_on_while_noisy_and_budget_remains() -> None:
    noisy = [1.0, 1.5, 0.7, 1.2]
    assert median_rse(noisy) > 0.01
    assert stop_reason(noisy, policy(), spent_s=0.0) is None
    assert stop_reason(noisy, policy(), spent_s=9.0, round_cost_s=0.5) is None


def test_stops_at_the_cap_or_when_the_next_round_would_overrun_the_budget() -> None:
    noisy = [1.0, 1.5, 0.7, 1.2] * 8
    assert stop_reason(noisy, policy(), spent_s=0.0) == StopReason.max_reps
    short = [1.0, 1.5, 0.7, 1.2]
    assert stop_reason(short, policy(), spent_s=9.0, round_cost_s=2.0) == StopReason.budget
    assert stop_reason(short, policy(budget_s=0.0), spent_s=0.0) == StopReason.budget
    assert stop_reason([], policy(), spent_s=0.0) is None


def test_rounds_double_and_never_pass_the_cap() -> None:
    rule = policy(min_reps=3, max_reps=20)
    done, sizes = 3, []
    while (size := next_round_size(done, rule)) > 0:
        sizes.append(size)
        done += size
    assert sizes == [3, 6, 8] and done == 20


def test_policy_defaults_and_validation() -> None:
    import torch

    cpu = TimingPolicy.for_device(torch.device("cpu"))
    gpu = TimingPolicy.for_device(torch.device("cuda"))
    assert cpu.budget_s == 0 and cpu.min_reps == 3
    assert gpu.min_reps == 20 and gpu.max_reps == 100 and gpu.warmup_s == pytest.approx(0.025) and gpu.target_rse == 0.01
    with pytest.raises(ValueError, match="max_reps"):
        TimingPolicy(min_reps=5, max_reps=4, budget_s=1)


@given(st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=1, max_size=40), st.floats(0, 5), st.floats(0, 5))
def test_stop_reason_is_consistent(samples: list[float], spent: float, cost: float) -> None:
    rule = policy()
    reason = stop_reason(samples, rule, spent, cost)
    rse = median_rse(samples)
    if rse is not None and rse <= rule.target_rse:
        assert reason == StopReason.rse_target
    elif len(samples) >= rule.max_reps:
        assert reason == StopReason.max_reps
    elif spent + cost > rule.budget_s:
        assert reason == StopReason.budget
    else:
        assert reason is None


# ---------------------------------------------------------------- rounds, end to end on CPU


def test_extra_rounds_time_fresh_inputs_and_the_reference_matches_them(vector_add) -> None:
    from gym.grading.grader import grade

    rule = TimingPolicy(min_reps=2, max_reps=8, budget_s=60, warmup_s=0.02, target_rse=1e-9)
    result = grade(vector_add, vector_add.solution_path, GradeOptions(timing=rule), secret=5)
    assert result.status.value == "passed", result.feedback
    timings = result.timings
    assert timings is not None and timings.candidate is not None and timings.reference is not None
    assert timings.rounds == 3 and timings.stop_reason == "max_reps" and timings.target_rse == 1e-9
    assert timings.candidate.reps == timings.reference.reps == 8
    assert timings.candidate.warmup_runs is not None and timings.candidate.warmup_runs >= 1
    assert timings.reference.warmup_runs is not None and timings.reference.warmup_runs >= 1


def test_a_later_round_that_goes_wrong_fails_the_grade(vector_add, tmp_path) -> None:
    """A kernel that behaves in the grading job and misbehaves in a timing round is caught:
    simulated by a backend that swaps the submission for a wrong one from the second job on."""
    import shutil

    from gym.grading.grader import grade
    from gym.sandbox import get_sandbox
    from gym.sandbox.base import _REGISTRY, register

    wrong = tmp_path / "wrong.py"
    wrong.write_text(vector_add.solution_path.read_text().replace("x + y, mask=mask)", "x * y, mask=mask)"))
    assert wrong.read_text() != vector_add.solution_path.read_text()
    inner = get_sandbox("bwrap")

    class Swapping:
        name = "swapping-test"
        isolated = True
        jobs = 0

        def check(self) -> str | None:
            return None

        def run(self, job, timeout_s, link=None):  # type: ignore[no-untyped-def]
            Swapping.jobs += 1
            if Swapping.jobs > 1:
                shutil.copyfile(wrong, job.in_dir / "submission.py")
            return inner.run(job, timeout_s, link)

    register(Swapping())
    try:
        rule = TimingPolicy(min_reps=2, max_reps=6, budget_s=60, target_rse=1e-9)
        result = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="swapping-test", timing=rule))
    finally:
        _REGISTRY.pop("swapping-test", None)
    assert Swapping.jobs == 2
    assert result.status.value == "wrong_answer", result.feedback
    assert "timing round 2" in (result.error or "")
    assert result.timings is None and result.speedup_vs_eager is None
