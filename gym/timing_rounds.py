"""Further timing rounds for a candidate that passed: each round is a sandboxed
job of timed calls only, on fresh inputs, every output checked against its own
expected values, run until `gym.timing_policy.stop_reason` says stop."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gym.job_files import write_job
from gym.judge import judge
from gym.result import Status
from gym.sandbox import Job, Limits, Sandbox
from gym.task_model import Task
from gym.timing_policy import StopReason, TimingPolicy, next_round_size, stop_reason
from gym.trials import CallPlan, Trial, plan_timed_calls
from gym.verdict import Verdict


@dataclass
class TimingRounds:
    # Candidate seconds per timed call, all rounds, in order.
    samples: list[float]
    # The inputs of every timed call (the reference is timed on the same ones).
    argsets: list[dict[str, Any]]
    stop: StopReason | None = None
    rounds: int = 1
    # A later round's failure (wrong values, a broken integrity rule, a crash), if any.
    failure: Verdict | None = None


def run_rounds(
    task: Task,
    trial: Trial,
    submission: Path,
    runner: Sandbox,
    device: torch.device,
    secret: int,
    policy: TimingPolicy,
    warmup: CallPlan | None,
    limits: Limits,
    timeout_s: float,
    first: TimingRounds,
) -> TimingRounds:
    """Add rounds to `first` (the grading job's own timed calls) until the stopping rule holds."""
    result = first
    spent = 0.0
    last_cost = 0.0
    while True:
        result.stop = stop_reason(result.samples, policy, spent, last_cost)
        if result.stop is not None:
            return result
        count = next_round_size(len(result.samples), policy)
        plans = plan_timed_calls(task, trial, device, secret, count, start=len(result.samples))
        round_trial = dataclasses.replace(trial, calls=plans)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kgym-timing-") as tmp:
            job = Job.in_folder(Path(tmp), device.type, limits)
            layout = write_job(job, submission, [round_trial], shuffle_seed=secret + result.rounds, warmup=warmup, warmup_s=policy.warmup_s)
            outcome = runner.run(job, timeout_s)
            verdict, _, seconds = judge(layout, job, outcome, device, task.spec.allowed_torch)
        last_cost = time.monotonic() - started
        spent += last_cost
        result.rounds += 1
        if verdict.status != Status.passed:
            result.failure = verdict
            return result
        result.samples.extend(seconds)
        result.argsets.extend(plan.args for plan in plans)
