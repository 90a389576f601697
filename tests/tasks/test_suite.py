"""Every shipped task: its solution passes (late calls on, as in any grade); zeros, passthrough
and an off-by-one-masked variant of the solution fail. The wrong variants are graded without
the late calls: those only add checked calls to a grade, and a variant must already fail on
its trials (the stronger claim), at about half the cost per grade here. Zeros and passthrough
are graded on the public shapes only: `kgym check-tasks` (tests/grading/test_task_validation.py)
already proves, without a kernel, that such trivial answers fail every public and hidden trial
of every shipped task, so here the point is the grader's verdict. The off-by-one mutant gets
every trial: a mask error can show only on a hidden shape's tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import discover
from tests.support.variants import VARIANTS

TASK_IDS = [task.id for task in discover().tasks]
SECRET = 20261129
# Answers `kgym check-tasks` refuses for every trial of a task (its trivial-answer check).
TRIVIAL_VARIANTS = {"zeros", "passthrough"}


def test_suite_is_complete() -> None:
    report = discover()
    assert not report.errors
    assert len(report.tasks) >= 16
    required = {"l1/vector_add", "l1/softmax", "l1/matmul", "l1/embedding_backward"}
    assert required <= {task.id for task in report.tasks}
    kinds = {check.kind for task in report.tasks for check in task.spec.contract}
    assert kinds >= {
        "bitwise",
        "allclose",
        "ulp",
        "normwise",
        "oracle",
        "topk_overlap",
        "logprob",
        "deterministic",
        "batch_invariant",
        "nontrivial",
    }


def test_every_float_task_has_a_nontrivial_check() -> None:
    for task in discover().tasks:
        if any(name.startswith(("float", "bfloat")) for name in task.spec.dtypes):
            assert any(check.kind == "nontrivial" for check in task.spec.contract), task.id


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_shipped_solution_passes(task_id: str) -> None:
    task = next(task for task in discover().tasks if task.id == task_id)
    result = grade(task, task.solution_path, GradeOptions(timing_reps=1), secret=SECRET)
    assert result.status == Status.passed, result.feedback
    # The nontrivial self-check ran and held on every trial.
    for trial in result.trials:
        assert trial.passed
        if any(check.kind == "nontrivial" for check in task.spec.contract):
            assert any(check.kind == "nontrivial" and check.passed for check in trial.checks)
    assert any(trial.hidden for trial in result.trials) == bool(task.spec.shapes.hidden)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_wrong_variants_fail(task_id: str, variant: str, tmp_path: Path) -> None:
    task = next(task for task in discover().tasks if task.id == task_id)
    path = tmp_path / f"{variant}.py"
    path.write_text(VARIANTS[variant](task.solution_path.read_text()))
    trivial = variant in TRIVIAL_VARIANTS
    result = grade(task, path, GradeOptions(timing_reps=0, late_calls=False, include_hidden=not trivial), secret=SECRET)
    assert result.status in {Status.wrong_answer, Status.runtime_error}, (variant, result.status, result.feedback)
    assert result.feedback.startswith(f"Status: {result.status.value}")
