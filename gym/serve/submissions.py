"""Asynchronous grading (`POST /submissions`): accept now, grade when a slot is
free, keep the result for polling. Submissions belong to no session.

Every submission lives in the server's `ServeState`: written before the client
hears it was accepted, its grade recorded once. `resume` grades the ones a
previous server left without a grade (queued or running when it died).
"""

from __future__ import annotations

import asyncio
import hashlib
import platform
import tempfile
import uuid
from pathlib import Path

from gym.errors import KernelGymError
from gym.grading.feedback import write_feedback
from gym.harness.env import Grader
from gym.schema.episode import GradeSummary
from gym.schema.http import Submission, SubmissionState
from gym.schema.result import Environment, GradeResult, Status
from gym.serve.queue import GradeQueue
from gym.serve.state import ServeState, SubmissionRecord, now
from gym.tasks.loader import find_task
from gym.tasks.model import Task


def grade_source(grader: Grader, task: Task, code: str) -> GradeResult:
    """Write `code` to a private file and grade it (blocking)."""
    with tempfile.TemporaryDirectory(prefix="kgym-submission-") as folder:
        path = Path(folder) / "submission.py"
        path.write_text(code, encoding="utf-8")
        return grader(task, path)


def unloadable_task_result(record: SubmissionRecord, error: Exception) -> GradeResult:
    """The infra_error grade of a resumed submission whose task no longer loads (nothing ran, so no sandbox)."""
    result = GradeResult(
        task_id=record.task_id,
        task_version=0,
        submission_sha256=hashlib.sha256(record.code.encode("utf-8")).hexdigest(),
        status=Status.infra_error,
        environment=Environment(python=platform.python_version(), torch="", triton=None, platform=platform.platform(), device="cpu", sandbox="none"),
        feedback="",
        error=f"the task no longer loads on this server: {error}",
        graded_at=now(),
        duration_s=0.0,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})


def as_submission(record: SubmissionRecord) -> Submission:
    """The wire view of a recorded submission: done once it has a grade, running once started, else queued."""
    if record.grade is not None:
        state = SubmissionState.done
    elif record.started_at is not None:
        state = SubmissionState.running
    else:
        state = SubmissionState.queued
    return Submission(
        id=record.id,
        task_id=record.task_id,
        state=state,
        submitted_at=record.submitted_at,
        finished_at=record.finished_at,
        summary=GradeSummary.of(record.grade) if record.grade is not None else None,
        result=record.grade,
    )


class SubmissionStore:
    """Accepts, grades and answers one-off submissions; `state` defaults to a temporary record."""

    def __init__(self, grader: Grader, queue: GradeQueue, state: ServeState | None = None) -> None:
        self.grader = grader
        self.queue = queue
        self.state = state or ServeState()
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, task: Task, code: str) -> Submission:
        """Record and queue a grade (raises QueueFull, recording nothing); call from the event loop."""
        self.queue.admit()
        record = SubmissionRecord(id=uuid.uuid4().hex, task_id=task.id, code=code, submitted_at=now())
        self.state.insert(record)
        # No await since admit(): the reservation cannot be refused now.
        self.queue.reserve()
        self._start(record, task)
        return as_submission(record)

    def resume(self) -> int:
        """Queue every submission a previous server left without a grade, oldest first; how many (call from the loop)."""
        records = self.state.requeue()
        for record in records:
            # Admitted before the restart: counted as waiting without a second admission check.
            self.queue.waiting += 1
            self._start(record, None)
        return len(records)

    def get(self, submission_id: str) -> Submission | None:
        record = self.state.submission(submission_id)
        return as_submission(record) if record is not None else None

    async def wait(self, submission_id: str) -> Submission:
        """Until the submission is done (used by the MCP tools)."""
        while (item := self.get(submission_id)) is None or item.state != SubmissionState.done:
            await asyncio.sleep(0.05)
        return item

    def cancel(self) -> None:
        """Stop waiting for the grades in flight (server shutdown): they stay ungraded, and a restart grades them."""
        for job in self._tasks:
            job.cancel()

    def _start(self, record: SubmissionRecord, task: Task | None) -> None:
        job = asyncio.get_running_loop().create_task(self._grade(record, task))
        self._tasks.add(job)
        job.add_done_callback(self._tasks.discard)

    async def _grade(self, record: SubmissionRecord, task: Task | None) -> None:
        async with self.queue.reserved_slot():
            self.state.mark_running(record.id)
            result = await asyncio.to_thread(self._grade_now, record, task)
        self.state.record_grade(record.id, result)

    def _grade_now(self, record: SubmissionRecord, task: Task | None) -> GradeResult:
        """Grade `record` (blocking); a resumed one (`task` None) first loads its task again."""
        if task is None:
            try:
                task = find_task(record.task_id)
            except KernelGymError as error:
                return unloadable_task_result(record, error)
        return grade_source(self.grader, task, record.code)
