"""Aggregate definitions on synthetic grades."""

from __future__ import annotations

import math

import pytest

from gym.schema.aggregates import aggregate
from gym.schema.result import Environment, GradeResult, Status, Timings, TimingSummary

ENV = Environment(python="3.11", torch="2.13", triton="3.7.1", platform="linux", device="cuda", sandbox="bwrap")


def grade(status: Status, eager: float | None = None, compile: float | None = None, sol: float | None = None, interpreted: bool = False) -> GradeResult:
    summary = TimingSummary(median_s=1e-3, mean_s=1e-3, p10_s=1e-3, p90_s=1e-3, min_s=1e-3, reps=3)
    return GradeResult(
        task_id="l1/x",
        task_version=1,
        submission_sha256="0" * 64,
        status=status,
        timings=Timings(device="NVIDIA H200", interpreted=interpreted, trial="t", candidate=summary, reference=summary),
        speedup_vs_eager=eager,
        speedup_vs_compile=compile,
        sol_fraction=sol,
        environment=ENV,
        feedback="",
        graded_at="2026-11-29T00:00:00+00:00",
        duration_s=1.0,
    )


def test_fast_p_counts_failures_and_missing_baselines_as_not_fast() -> None:
    grades = [
        grade(Status.passed, eager=3.0, compile=1.2, sol=0.5),
        grade(Status.passed, eager=1.2, compile=None, sol=0.2),
        grade(Status.passed, eager=0.5, compile=0.4),
        grade(Status.wrong_answer, eager=10.0),  # a fast wrong kernel is never fast
        grade(Status.rejected, eager=100.0),
    ]
    result = aggregate(grades)
    assert result.tasks == 5 and result.passed == 3
    assert result.correct_rate == pytest.approx(0.6)
    assert result.eager.fast == {"fast_0": 0.6, "fast_1": 0.4, "fast_1.5": 0.2, "fast_2": 0.2}
    assert result.compile.fast == {"fast_0": 0.4, "fast_1": 0.2, "fast_1.5": 0.0, "fast_2": 0.0}
    assert result.eager.geomean_count == 3
    assert result.eager.geomean_speedup == pytest.approx(math.exp((math.log(3.0) + math.log(1.2) + math.log(0.5)) / 3))
    assert result.compile.geomean_count == 2
    assert result.median_sol_fraction == pytest.approx(0.35)
    assert not result.interpreted


def test_empty_and_all_failed() -> None:
    assert aggregate([]).correct_rate == 0.0
    failed = aggregate([grade(Status.timeout), grade(Status.compile_error)])
    assert failed.eager.geomean_speedup is None and failed.eager.geomean_count == 0
    assert set(failed.eager.fast.values()) == {0.0}


def test_interpreted_and_gpu_grades_never_mix() -> None:
    assert aggregate([grade(Status.passed, eager=1.0, interpreted=True)]).interpreted
    with pytest.raises(ValueError, match="cannot be aggregated"):
        aggregate([grade(Status.passed, interpreted=True), grade(Status.passed, interpreted=False)])


def test_unattempted_tasks_count_as_neither_correct_nor_fast() -> None:
    graded = [grade(Status.passed, eager=3.0, compile=2.5), grade(Status.passed, eager=1.2)]
    result = aggregate(graded, unattempted=2)
    assert result.tasks == 4 and result.passed == 2 and result.correct_rate == 0.5
    assert result.eager.fast["fast_1"] == 0.5 and result.eager.fast["fast_2"] == 0.25
    assert result.eager.geomean_count == 2  # the geometric mean covers graded passes only
    only_missing = aggregate([], unattempted=3)
    assert only_missing.tasks == 3 and only_missing.correct_rate == 0.0 and only_missing.eager.fast["fast_0"] == 0.0
    with pytest.raises(ValueError):
        aggregate(graded, unattempted=-1)


def test_grades_are_counted_by_kernel_language() -> None:
    helion = grade(Status.passed, eager=2.0).model_copy(update={"dsl": "helion"})
    figures = aggregate([grade(Status.passed, eager=1.0), grade(Status.wrong_answer), helion])
    assert figures.dsls == {"helion": 1, "triton": 2}
    assert aggregate([]).dsls == {}
