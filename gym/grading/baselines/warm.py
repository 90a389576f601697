"""Precompute a suite's reference baselines (`kgym baselines warm`), so the grades of a
long job (an RL run) reuse them from the cache instead of timing the reference each time.

For each task it measures exactly the shapes a grade would time on this device
(`gym.grading.planning.plan.plan_trials`): on a GPU every benchmark shape of the first dtype
(or the first public shape of a task without benchmark shapes), on CPU the first
public shape; under the device's default timing policy (`TimingPolicy.for_device`),
with the same timer, warm-up and stopping rule, each call on inputs from fresh
seeds (`gym.grading.baselines.measure.measure_baseline`). A GPU measurement holds its GPU
(`gym.devices.lock`), like a grade. Entries already cached for the same key
are kept unless `fresh`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from gym.devices.lock import holding
from gym.errors import BaselineCacheError
from gym.grading.baselines.cache import BaselineCache
from gym.grading.baselines.measure import BaselinePoint, BaselineSetting, reference_baseline
from gym.grading.timing.timing_policy import TimingPolicy
from gym.tasks.model import Shape, Task
from gym.worker.timer import CallTimer


@dataclass(frozen=True)
class BaselineTarget:
    """One shape a grade of `task` would time: its trial label (as the grade names it), dtype and shape."""

    task: Task
    label: str
    dtype: str
    shape: Shape


def grade_timed_shapes(task: Task, device: torch.device, bench: bool | None = None) -> list[BaselineTarget]:
    """The shapes a grade of `task` on `device` times, labelled as plan_trials labels them: with `bench`
    (default: on a GPU) every benchmark shape of the first dtype, else (or without any) the first public shape."""
    gpu = device.type == "cuda"
    bench = gpu if bench is None else bench
    dtypes = list(task.spec.dtypes) + (list(task.spec.gpu_only_dtypes) if gpu else [])
    if not dtypes or not task.spec.shapes.public:
        return []
    dtype = dtypes[0]
    if bench and task.spec.shapes.bench:
        return [BaselineTarget(task, f"{dtype} bench #{index + 1}", dtype, shape) for index, shape in enumerate(task.spec.shapes.bench)]
    return [BaselineTarget(task, f"{dtype} public #1", dtype, task.spec.shapes.public[0])]


def warm_targets(tasks: Sequence[Task], device: torch.device, bench: bool | None = None) -> list[BaselineTarget]:
    """Every task's timed shapes, in task order."""
    return [target for task in tasks for target in grade_timed_shapes(task, device, bench)]


class WarmedBaseline(BaseModel):
    """What warming one shape did (`kgym baselines warm --json` prints a list of these)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description='The task, e.g. "l1/softmax".')
    trial: str = Field(description='The timed trial as a grade names it, e.g. "float32 bench #1".')
    dtype: str = Field(description="The timed dtype.")
    shape: dict[str, int] = Field(description="The timed shape's parameters.")
    outcome: Literal["measured", "cached", "failed"] = Field(
        description='"measured" (and stored), "cached" (an entry for the same key was already there; kept), or "failed" (nothing stored; see error).'
    )
    eager_median_s: float | None = Field(default=None, description="The eager reference's median seconds per call.")
    compiled_median_s: float | None = Field(default=None, description="The reference under torch.compile, median seconds per call (GPU only).")
    rse: float | None = Field(default=None, description="Relative standard error of the eager median.")
    reps: int | None = Field(default=None, description="Timed repetitions of the eager figure.")
    measured_at: str | None = Field(default=None, description="When the stored entry was measured (ISO-8601 UTC).")
    error: str | None = Field(default=None, description="Why nothing was stored, when outcome is failed.")


def warm_baselines(
    targets: Sequence[BaselineTarget],
    device: torch.device,
    *,
    policy: TimingPolicy | None = None,
    fresh: bool = False,
    cache: BaselineCache | None = None,
    on_done: Callable[[WarmedBaseline], None] | None = None,
) -> list[WarmedBaseline]:
    """Measure and store every target's baseline (reusing entries already cached for the same key unless
    `fresh`); `policy` defaults to the device's, the one a grade uses. A reference that cannot be timed is a
    `failed` row, never an exception; a cache folder that cannot be written raises BaselineCacheError."""
    policy = policy or TimingPolicy.for_device(device)
    cache = cache or BaselineCache()
    try:
        timer: CallTimer | None = CallTimer(device)
    except Exception:  # noqa: BLE001 - the flush buffer does not fit now; each measurement makes its own or says why
        timer = None
    rows: list[WarmedBaseline] = []
    for target in targets:
        row = WarmedBaseline(task_id=target.task.id, trial=target.label, dtype=target.dtype, shape=dict(target.shape), outcome="failed")
        try:
            with holding(device):
                baseline = reference_baseline(
                    BaselineSetting(task=target.task, device=device, policy=policy, timer=timer, cache=cache, fresh=fresh, origin="warm"),
                    BaselinePoint(label=target.label, dtype=target.dtype, shape=target.shape),
                    compiled=device.type == "cuda",
                )
        except BaselineCacheError:
            raise
        except Exception as error:  # noqa: BLE001 - e.g. a CUDA OOM on a benchmark shape: that row fails, the rest go on
            row.error = f"the eager reference could not be timed: {type(error).__name__}: {str(error)[:300]}"
        else:
            entry = baseline.entry
            row.outcome = "cached" if baseline.cached else "measured" if baseline.compiled_note is None else "failed"
            row.error = baseline.compiled_note
            row.eager_median_s = entry.eager.median_s
            row.compiled_median_s = entry.compiled.median_s if entry.compiled else None
            row.rse, row.reps = entry.eager.rse, entry.eager.reps
            row.measured_at = entry.measured_at if row.outcome != "failed" else None
        rows.append(row)
        if on_done is not None:
            on_done(row)
    return rows
