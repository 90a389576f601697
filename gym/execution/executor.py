"""The executor interface and the executors' registry; every grade carries a `GradeOptions` (gym.grading.options)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gym.errors import ExecutorError
from gym.grading.grader import Grader
from gym.grading.options import GradeOptions
from gym.schema.result import GradeResult
from gym.tasks.model import Task


class Executor(Protocol):
    # Registry name ("local", "ray").
    name: str
    # Grades it runs at once; callers size their own thread pools by it.
    concurrency: int

    def grade(self, task: Task, submission: Path, options: GradeOptions | None = None) -> GradeResult:
        """Grade `submission` against `task` and return the result; blocking, thread-safe, never raises for
        anything the submission does (a lost worker, once retries run out, is an `infra_error` result)."""
        ...

    def close(self) -> None:
        """Stop what the executor started (warm workers, a Ray connection it made); idempotent."""
        ...


# name -> factory(**settings) -> Executor; each implementation registers itself on import.
EXECUTORS: dict[str, str] = {
    "local": "gym.execution.local:LocalExecutor",
    "ray": "gym.execution.ray_executor:RayExecutor",
}


def make_executor(name: str = "local", **settings: Any) -> Executor:
    """The executor called `name`, built with `settings` (each implementation documents its own)."""
    import importlib

    try:
        target = EXECUTORS[name]
    except KeyError:
        raise ExecutorError(f"unknown executor {name!r}; known: {', '.join(sorted(EXECUTORS))}") from None
    module_name, _, attribute = target.partition(":")
    factory: Callable[..., Executor] = getattr(importlib.import_module(module_name), attribute)
    return factory(**settings)


def executor_grader(executor: Executor, options: GradeOptions | None = None) -> Grader:
    """`executor` as the harness's `Grader` (grade(task, submission file) -> GradeResult), with `options`."""

    def run(task: Task, submission: Path) -> GradeResult:
        return executor.grade(task, submission, options)

    return run
