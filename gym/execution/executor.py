"""The executor interface, the options every grade carries, and the registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from gym.errors import KernelGymError
from gym.grading.confirm import ConfirmThreshold
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.result import GradeResult
from gym.tasks.model import Task


class ExecutorError(KernelGymError, ValueError):
    """An executor that cannot be built as asked (unknown name, a cluster that cannot be reached)."""

    http_status = 503


class GradeOptions(BaseModel):
    """What a grade is asked for besides its task and submission; `gym.grading.grader.grade`'s keywords.

    The device is not here: the executor places each grade (see `gym.execution.devices`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sandbox: str = Field(default=DEFAULT_SANDBOX, description='Sandbox backend: "bwrap", "docker" or "process" (unsafe).')
    include_hidden: bool = Field(default=True, description="Also check the task's hidden shapes.")
    timing_reps: int | None = Field(default=None, ge=0, description="Timed calls in the first round (None: the device's policy).")
    timeout_s: float | None = Field(default=None, gt=0, description="Wall-clock limit of each job (None: the task's).")
    bench: bool | None = Field(default=None, description="Time every benchmark shape (None: on for a GPU, off on CPU).")
    late_calls: bool = Field(default=True, description="Add the late calls (off only to measure what they cost).")
    contract: str | None = Field(default=None, description='A contract preset graded against instead of the task\'s own (e.g. "kernelbench").')
    fresh_baselines: bool = Field(default=False, description="Re-measure the reference baselines instead of reusing cached ones.")
    warm: bool = Field(default=True, description="Take the worker from the warm pool when one is ready (False: always a cold start).")
    gpu_profile: str = Field(default="H100 SXM", description="The GPU profile the counted traffic is modelled on (gym/grading/gpu_profiles.toml).")
    profile: Literal["ncu"] | None = Field(default=None, description='"ncu": also Nsight Compute\'s speed-of-light figures of one replay (GPU only).')
    confirm: bool = Field(default=True, description="Re-grade a pass with an implausible speedup once before it counts (gym.grading.confirm).")
    confirm_threshold: ConfirmThreshold | None = Field(
        default=None, description="When a pass is re-graded and what it must reach (None: gym.grading.confirm.DEFAULT_THRESHOLD)."
    )

    def grade_keywords(self) -> dict[str, Any]:
        """The keywords `grade()` takes for these options (models stay models: `confirm_threshold`)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


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


def executor_grader(executor: Executor, options: GradeOptions | None = None) -> Callable[[Task, Path], GradeResult]:
    """`executor` as the harness's `Grader` (grade(task, submission file) -> GradeResult), with `options`."""

    def run(task: Task, submission: Path) -> GradeResult:
        return executor.grade(task, submission, options)

    return run
