"""Grade many (task, submission) pairs, a few at a time, through an executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from gym.execution.executor import Executor
from gym.execution.local import LocalExecutor
from gym.grading.options import GradeOptions
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.result import GradeResult
from gym.tasks.model import Task


def grade_many(
    jobs: Sequence[tuple[Task, Path]],
    *,
    parallel: int | None = 2,
    sandbox: str = DEFAULT_SANDBOX,
    on_done: Callable[[Task, GradeResult], None] | None = None,
    late_calls: bool = True,
    executor: Executor | None = None,
    warm: bool = True,
    fresh_baselines: bool = False,
) -> list[GradeResult]:
    """Grade every (task, submission) pair; results in the order of `jobs`.

    Grades go through `executor` (default: a `local` one with `parallel` grades
    at once, closed at the end; `parallel=None` lets it pick: the GPUs on a GPU
    host, the cores on CPU); with an `executor`, its concurrency says how many
    grades overlap and `parallel` is unused. `warm=False` starts every worker cold;
    `late_calls=False` only to measure what the late calls cost (see grade()).
    """
    options = GradeOptions(sandbox=sandbox, late_calls=late_calls, warm=warm, fresh_baselines=fresh_baselines)
    owned = executor is None
    chosen: Executor = executor if executor is not None else LocalExecutor(concurrency=parallel, warm=warm)
    lanes = max(1, chosen.concurrency)
    results: list[GradeResult | None] = [None] * len(jobs)
    try:
        with ThreadPoolExecutor(max_workers=lanes) as pool:
            futures = {pool.submit(chosen.grade, task, path, options): index for index, (task, path) in enumerate(jobs)}
            for future in as_completed(futures):
                index = futures[future]
                result = results[index] = future.result()
                if on_done is not None:
                    on_done(jobs[index][0], result)
    finally:
        if owned:
            chosen.close()
    return [result for result in results if result is not None]
