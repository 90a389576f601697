"""The executor interface and the executors' registry; every grade carries a `GradeOptions` (gym.grading.options)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gym import registry
from gym.errors import ExecutorError, UnknownPlugin
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


# The executor table of gym.registry (the same dict): name -> factory(**settings) -> Executor, as
# "module:attribute" strings imported on first use; plugins add theirs through the
# `kernel_gym.executors` entry point group.
EXECUTORS: dict[str, str] = registry.entries("executor", scan=False)
registry.register("executor", "local", "gym.execution.local:LocalExecutor")
registry.register("executor", "ray", "gym.execution.ray_executor:RayExecutor")


def make_executor(name: str = "local", **settings: Any) -> Executor:
    """The executor called `name`, built with `settings` (each implementation documents its own)."""
    try:
        factory: Callable[..., Executor] = registry.lookup("executor", name)
    except UnknownPlugin as error:
        raise ExecutorError(str(error)) from None
    return factory(**settings)


def executor_grader(executor: Executor, options: GradeOptions | None = None) -> Grader:
    """`executor` as the harness's `Grader` (grade(task, submission file) -> GradeResult), with `options`."""

    def run(task: Task, submission: Path) -> GradeResult:
        return executor.grade(task, submission, options)

    return run
