"""Baseline timings and speedups, per timed shape: the reference (eager, and
under torch.compile on a GPU) timed with the worker's own timer on the
candidate's own timed inputs, regenerated one call at a time from their seeds
(never all alive at once), then the speedups and the speed-of-light fraction
of each shape and their geometric means."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

from gym.grading.plan import timed_inputs
from gym.grading.speed_of_light import bound_seconds
from gym.grading.statistics import summarize
from gym.grading.timing_policy import TimingPolicy
from gym.grading.timing_rounds import ShapeRounds, TimingRounds
from gym.schema.result import ShapeTimings, Timings, TimingSummary
from gym.tasks.model import Shape, Task
from gym.tasks.references import call_args, clone_args, reference_fn
from gym.worker.timer import CallTimer, synchronize, time_each, warm_up


def compiled_reference(task: Task, shape: Shape) -> Callable[..., Any]:
    """The reference under torch.compile with static shapes: a figure never depends on the
    shapes this process compiled before (dynamic=None would turn dynamic after two)."""
    return torch.compile(reference_fn(task, shape), dynamic=False)


def reference_timing(
    task: Task, shape: ShapeRounds, device: torch.device, policy: TimingPolicy, reference: Callable[..., Any], timer: CallTimer | None = None
) -> TimingSummary:
    """`reference` timed like the candidate: warmed up for the same time on the same warm-up
    inputs, then once on each of the candidate's timed inputs, with the same timer."""
    params = task.spec.params

    def step() -> bool:
        if shape.warmup is not None:
            reference(*call_args(clone_args(shape.warmup.args), params))
            synchronize(device)
        return True

    def argsets() -> Iterator[dict[str, Any]]:
        for seed in shape.seeds:
            yield timed_inputs(task, shape.trial, seed, device)

    runs = warm_up(step, policy.warmup_s)
    samples = time_each(lambda args: reference(*call_args(args, params)), argsets(), device, timer)
    return TimingSummary(**summarize(samples), warmup_runs=runs)


def geometric_mean(values: list[float | None]) -> float | None:
    """The geometric mean; None when any value is missing (a partial mean would mislead)."""
    if not values or any(value is None or value <= 0 for value in values):
        return None
    return math.exp(sum(math.log(value) for value in values if value is not None) / len(values))


def _failure(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[:300]}"


def shape_timings(
    task: Task,
    shape: ShapeRounds,
    device: torch.device,
    device_name: str,
    policy: TimingPolicy,
    warmup_runs: int | None,
    compiled: bool,
    cache_bytes: int | None,
    timer: CallTimer | None = None,
) -> ShapeTimings:
    """One shape's figures; a baseline that cannot be measured (an OOM, a compile failure) is a note, never a number."""
    entry = ShapeTimings(trial=shape.trial.label, shape=dict(shape.trial.shape), stop_reason=shape.stop.value if shape.stop else None, rounds=shape.rounds)
    samples = [value for value in shape.samples if value >= 0]
    if not samples:
        return entry
    entry.candidate = TimingSummary(**summarize(samples), warmup_runs=warmup_runs)
    median = entry.candidate.median_s
    try:
        entry.reference = reference_timing(task, shape, device, policy, reference_fn(task, shape.trial.shape), timer)
    except Exception as error:  # noqa: BLE001 - e.g. a CUDA OOM on a benchmark shape: reported, not raised
        entry.compiled_note = f"the eager reference could not be timed: {_failure(error)}"
        return entry
    if compiled:
        try:
            entry.compiled = reference_timing(task, shape, device, policy, compiled_reference(task, shape.trial.shape), timer)
        except Exception as error:  # noqa: BLE001 - a baseline that cannot be measured is reported, not guessed
            entry.compiled_note = f"torch.compile failed: {_failure(error)}"
    if median > 0:
        entry.speedup_vs_eager = entry.reference.median_s / median
        entry.speedup_vs_compile = entry.compiled.median_s / median if entry.compiled else None
        if device.type == "cuda":
            bound = bound_seconds(task, shape.trial.shape, shape.trial.dtype, device_name, cache_bytes)
            entry.sol_fraction = bound / median if bound is not None else None
    return entry


def build_timings(
    task: Task, rounds: TimingRounds, device: torch.device, policy: TimingPolicy, warmup_runs: int | None, cache_bytes: int | None = None
) -> Timings:
    """The grade's timings: every timed shape's candidate samples and baselines, the first shape's at the top level."""
    interpreted = device.type == "cpu"
    device_name = "cpu" if interpreted else torch.cuda.get_device_name(device)
    first = rounds.shapes[0]
    timings = Timings(
        device=device_name,
        interpreted=interpreted,
        trial=first.trial.label,
        target_rse=policy.target_rse,
        stop_reason=first.stop.value if first.stop else None,
        rounds=rounds.rounds,
    )
    timer: CallTimer | None = None
    try:
        timer = CallTimer(device)
    except Exception:  # noqa: BLE001 - the flush buffer does not fit now; each shape tries again and says why
        timer = None
    for shape in rounds.shapes:
        timings.shapes.append(shape_timings(task, shape, device, device_name, policy, warmup_runs, not interpreted, cache_bytes, timer))
    head = timings.shapes[0]
    timings.candidate, timings.reference, timings.compiled = head.candidate, head.reference, head.compiled
    if head.candidate is None:
        timings.note = timings.note or "the candidate was not timed"
    if interpreted:
        timings.compiled_note = "not measured on CPU: interpreted timings are never compared with compiled code"
    else:
        timings.compiled_note = next((entry.compiled_note for entry in timings.shapes if entry.compiled_note), None)
    return timings
