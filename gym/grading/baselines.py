"""Baseline timings: the reference (eager, and under torch.compile on a GPU),
timed with the worker's own timer on the candidate's timed inputs."""

from __future__ import annotations

from typing import Any

import torch

from gym.grading.plan import CallPlan, Trial
from gym.grading.statistics import summarize
from gym.grading.timing_policy import TimingPolicy
from gym.grading.timing_rounds import TimingRounds
from gym.schema.result import Timings, TimingSummary
from gym.tasks.model import Task
from gym.tasks.references import call_args, clone_args, reference_fn
from gym.worker.timer import synchronize, time_each, warm_up


def reference_timing(
    task: Task, argsets: list[dict[str, Any]], warmup: CallPlan, device: torch.device, policy: TimingPolicy, compiled: bool = False
) -> TimingSummary:
    """The reference (eager, or under torch.compile) timed like the candidate: warmed
    up for the same time on the same warm-up inputs, then once on each of the
    candidate's timed inputs (fresh clones), with the same timer."""
    reference = reference_fn(task)
    if compiled:
        reference = torch.compile(reference)

    def run(args: dict[str, Any]) -> Any:
        return reference(*call_args(args, task.spec.params))

    def step() -> bool:
        run(clone_args(warmup.args))
        synchronize(device)
        return True

    runs = warm_up(step, policy.warmup_s)
    samples = time_each(run, [clone_args(a) for a in argsets], device)
    return TimingSummary(**summarize(samples), warmup_runs=runs)


def build_timings(
    task: Task, trial: Trial, rounds: TimingRounds, warmup: CallPlan, device: torch.device, policy: TimingPolicy, warmup_runs: int | None
) -> Timings:
    """The grade's timings: the candidate's samples from every round, and the baselines on the same inputs."""
    timings = Timings(
        device=device.type if device.type == "cpu" else torch.cuda.get_device_name(),
        interpreted=device.type == "cpu",
        trial=trial.label,
        target_rse=policy.target_rse,
        stop_reason=rounds.stop.value if rounds.stop else None,
        rounds=rounds.rounds,
    )
    samples = [value for value in rounds.samples if value >= 0]
    if not samples:
        timings.note = "the candidate was not timed"
        return timings
    timings.candidate = TimingSummary(**summarize(samples), warmup_runs=warmup_runs)
    timings.reference = reference_timing(task, rounds.argsets, warmup, device, policy)
    if timings.interpreted:
        timings.compiled_note = "not measured on CPU: interpreted timings are never compared with compiled code"
    else:
        try:
            timings.compiled = reference_timing(task, rounds.argsets, warmup, device, policy, compiled=True)
        except Exception as error:  # noqa: BLE001 - a baseline that cannot be measured is reported, not guessed
            timings.compiled_note = f"torch.compile failed: {type(error).__name__}: {str(error)[:300]}"
    return timings
