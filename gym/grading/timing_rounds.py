"""Further timing rounds for a candidate that passed: each round is a sandboxed
job of timed calls only, on fresh inputs, every output checked against its own
expected values, run until `gym.grading.timing_policy.stop_reason` says stop."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from gym.grading.job import GradeInProgress, run_job
from gym.grading.plan import CallPlan, Trial, plan_timed_calls
from gym.grading.timing_policy import StopReason, next_round_size, stop_reason
from gym.grading.verdict import Verdict
from gym.schema.result import Status


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


def run_rounds(grade: GradeInProgress, trial: Trial, warmup: CallPlan | None, first: TimingRounds, first_cost_s: float = 0.0) -> TimingRounds:
    """Add rounds to `first` (the grading job's own timed calls) until the stopping rule holds.

    `first_cost_s` is what the grading job took: the first decision estimates the
    next round's cost from it (a round costs at least a job), so a round that
    cannot fit in the budget is never started."""
    result = first
    spent = 0.0
    last_cost = first_cost_s
    while True:
        result.stop = stop_reason(result.samples, grade.policy, spent, last_cost)
        if result.stop is not None:
            return result
        count = next_round_size(len(result.samples), grade.policy)
        plans = plan_timed_calls(grade.task, trial, grade.device, grade.secret, count, start=len(result.samples))
        started = time.monotonic()
        judged = run_job(grade, [dataclasses.replace(trial, calls=plans)], shuffle_seed=grade.secret + result.rounds, warmup=warmup, prefix="kgym-timing-")
        last_cost = time.monotonic() - started
        spent += last_cost
        result.rounds += 1
        if judged.verdict.status != Status.passed:
            result.failure = judged.verdict
            return result
        result.samples.extend(judged.timed_seconds)
        result.argsets.extend(plan.args for plan in plans)
