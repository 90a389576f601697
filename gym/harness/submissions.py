"""Asynchronous grading (`POST /submissions`): accept now, grade when a slot is
free, keep the result for polling. Submissions belong to no session."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path

from gym.harness.env import Grader
from gym.harness.grade_queue import GradeQueue
from gym.schema.episode import GradeSummary
from gym.schema.http import Submission, SubmissionState
from gym.schema.result import GradeResult
from gym.tasks.model import Task

# Finished submissions kept for polling; the oldest are forgotten first.
KEEP_FINISHED = 1000


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def grade_source(grader: Grader, task: Task, code: str) -> GradeResult:
    """Write `code` to a private file and grade it (blocking)."""
    with tempfile.TemporaryDirectory(prefix="kgym-submission-") as folder:
        path = Path(folder) / "submission.py"
        path.write_text(code, encoding="utf-8")
        return grader(task, path)


class SubmissionStore:
    def __init__(self, grader: Grader, queue: GradeQueue, keep: int = KEEP_FINISHED) -> None:
        self.grader = grader
        self.queue = queue
        self.keep = keep
        self._items: OrderedDict[str, Submission] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, task: Task, code: str) -> Submission:
        """Queue a grade (raises QueueFull); call from the event loop."""
        self.queue.reserve()
        item = Submission(id=uuid.uuid4().hex, task_id=task.id, state=SubmissionState.queued, submitted_at=now())
        self._items[item.id] = item
        job = asyncio.get_running_loop().create_task(self._grade(item.id, task, code))
        self._tasks.add(job)
        job.add_done_callback(self._tasks.discard)
        self._forget_old()
        return item

    def get(self, submission_id: str) -> Submission | None:
        return self._items.get(submission_id)

    async def wait(self, submission_id: str) -> Submission:
        """Until the submission is done (used by the MCP tools)."""
        while (item := self._items[submission_id]).state != SubmissionState.done:
            await asyncio.sleep(0.05)
        return item

    async def _grade(self, submission_id: str, task: Task, code: str) -> None:
        async with self.queue.reserved_slot():
            self._update(submission_id, state=SubmissionState.running)
            result = await asyncio.to_thread(grade_source, self.grader, task, code)
        self._update(submission_id, state=SubmissionState.done, finished_at=now(), summary=GradeSummary.of(result), result=result)

    def _update(self, submission_id: str, **changes: object) -> None:
        item = self._items.get(submission_id)
        if item is not None:
            self._items[submission_id] = item.model_copy(update=changes)

    def _forget_old(self) -> None:
        finished = [key for key, item in self._items.items() if item.state == SubmissionState.done]
        for key in finished[: max(0, len(finished) - self.keep)]:
            del self._items[key]
