"""The gym's own failures as grades: `infra_result` (an `infra_error` GradeResult with the error in
`error` and `feedback`) and `guarded`, a grader that never raises (an exception inside it becomes one)."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from gym.grading.feedback import write_feedback
from gym.grading.grader import Grader, default_device, environment
from gym.schema.result import Environment, GradeResult, Status
from gym.tasks.model import Task


def infra_result(task: Task, submission: Path, error: str, sandbox: str, duration_s: float = 0.0) -> GradeResult:
    try:
        env: Environment = environment(default_device(), sandbox, None)
    except Exception:  # noqa: BLE001 - describing the machine must not fail the report
        env = Environment(python="", torch=torch.__version__, triton=None, platform="", device="cpu", sandbox=sandbox)
    digest = hashlib.sha256(submission.read_bytes()).hexdigest() if submission.is_file() else ""
    result = GradeResult(
        task_id=task.id,
        task_version=task.spec.version,
        submission_sha256=digest,
        status=Status.infra_error,
        environment=env,
        feedback="",
        error=error,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=duration_s,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})


def guarded(grader: Grader, sandbox: str) -> Grader:
    def run(task: Task, submission: Path) -> GradeResult:
        started = time.monotonic()
        try:
            return grader(task, submission)
        except Exception as error:  # noqa: BLE001 - reported as infra_error, never raised to a client
            return infra_result(task, submission, f"grader failed: {type(error).__name__}: {error}", sandbox, time.monotonic() - started)

    return run
