"""Grade many (task, submission) pairs, a few at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from gym.grading.grader import grade
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.result import GradeResult
from gym.tasks.model import Task


def grade_many(
    jobs: Sequence[tuple[Task, Path]],
    *,
    parallel: int = 2,
    sandbox: str = DEFAULT_SANDBOX,
    on_done: Callable[[Task, GradeResult], None] | None = None,
    late_calls: bool = True,
) -> list[GradeResult]:
    """Grade every (task, submission) pair; results in the order of `jobs`.

    Each grade runs its own worker process, so `parallel` grades overlap.
    `late_calls=False` only to measure what the late calls cost (see grade()).
    """
    results: list[GradeResult | None] = [None] * len(jobs)
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = {pool.submit(grade, task, path, sandbox=sandbox, late_calls=late_calls): index for index, (task, path) in enumerate(jobs)}
        for future in as_completed(futures):
            index = futures[future]
            result = results[index] = future.result()
            if on_done is not None:
                on_done(jobs[index][0], result)
    return [result for result in results if result is not None]
