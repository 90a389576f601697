"""Realistic GradeResults without grading, for harness tests (a real grade takes seconds)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from gym.grading.feedback import write_feedback
from gym.schema.result import Environment, GradeResult, Status, Timings, TimingSummary
from gym.tasks.model import Task

CPU_ENV = Environment(python="3.11.7", torch="2.13.0+cpu", triton="3.7.1", platform="linux", device="cpu", sandbox="bwrap")


def fake_grade(task_id: str, code: str, status: Status, speedup: float | None = 1.5, flags: list[str] | None = None) -> GradeResult:
    passed = status == Status.passed
    summary = TimingSummary(median_s=1e-3, mean_s=1.1e-3, p10_s=0.9e-3, p90_s=1.3e-3, min_s=0.8e-3, rse=0.02, reps=3)
    result = GradeResult(
        task_id=task_id,
        task_version=1,
        submission_sha256=hashlib.sha256(code.encode()).hexdigest(),
        status=status,
        timings=Timings(device="cpu", interpreted=True, trial="float32 public #1", candidate=summary, reference=summary) if passed else None,
        speedup_vs_eager=speedup if passed else None,
        integrity_flags=flags or [],
        environment=CPU_ENV,
        feedback="",
        error=None if passed else f"{status.value}: something is off",
        graded_at="2026-11-29T00:00:00+00:00",
        duration_s=0.01,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})


def marker_grader(calls: list[tuple[str, str]] | None = None) -> Callable[[Task, Path], GradeResult]:
    """Passes code containing "# PASS", rejects "# CHEAT", answers "# INFRA" with an infra_error (the gym's
    failure: masked), fails anything else as wrong_answer."""

    def grade(task: Task, path: Path) -> GradeResult:
        code = path.read_text()
        if calls is not None:
            calls.append((task.id, code))
        if "# CHEAT" in code:
            return fake_grade(task.id, code, Status.rejected, flags=["input_mutated:x"])
        if "# INFRA" in code:
            return fake_grade(task.id, code, Status.infra_error)
        return fake_grade(task.id, code, Status.passed if "# PASS" in code else Status.wrong_answer)

    return grade
