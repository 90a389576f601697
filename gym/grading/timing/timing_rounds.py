"""Further timing rounds for a candidate that passed: each round is one sandboxed
job of timed calls only, on fresh inputs, every output checked against its own
expected values. Every timed shape has its own samples and its own stopping
decision (`gym.grading.timing.timing_policy.stop_reason`); a round times the shapes
that have not stopped yet, together, within the round's byte cap."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from gym.grading.judging.verdict import Verdict
from gym.grading.planning.plan import ROUND_BYTES_FRACTION, CallPlan, Trial, calls_that_fit, plan_timed_calls
from gym.grading.running.job import GradeInProgress, run_job
from gym.grading.running.job_files import JobCalls
from gym.grading.timing.timing_policy import StopReason, next_round_size, stop_reason
from gym.schema.result import Status


@dataclass
class ShapeRounds:
    """One timed shape's samples over all rounds."""

    # The trial whose shape (and dtype, checks, label) is timed.
    trial: Trial
    # Its warm-up call (candidate and reference warm up on it).
    warmup: CallPlan | None
    # Candidate seconds per timed call, all rounds, in order.
    samples: list[float] = field(default_factory=list)
    stop: StopReason | None = None
    # In how many jobs this shape was timed.
    rounds: int = 1

    def add(self, plans: list[CallPlan], seconds: list[float]) -> None:
        self.samples.extend(seconds)


@dataclass
class TimingRounds:
    # Every timed shape, in the order they were planned.
    shapes: list[ShapeRounds]
    # How many jobs timed the candidate (the grading job is the first).
    rounds: int = 1
    # A later round's failure (wrong values, a broken integrity rule, a crash), if any.
    failure: Verdict | None = None


def round_bytes(grade: GradeInProgress) -> int:
    """What one job's timed calls may hold together (see plan.ROUND_BYTES_FRACTION)."""
    return int(grade.limits.output_bytes * ROUND_BYTES_FRACTION)


def run_rounds(grade: GradeInProgress, result: TimingRounds, first_cost_s: float = 0.0) -> TimingRounds:
    """Add rounds to `result` (the grading job's own timed calls) until every shape's stopping rule holds.

    `first_cost_s` is what the grading job took: the first decision estimates the
    next round's cost from it (a round costs at least a job), so a round that
    cannot fit in the budget is never started."""
    spent = 0.0
    last_cost = first_cost_s
    while True:
        pending = []
        for shape in result.shapes:
            if shape.stop is None:
                shape.stop = stop_reason(shape.samples, grade.policy, spent, last_cost)
            if shape.stop is None:
                pending.append(shape)
        if not pending:
            return result
        share = round_bytes(grade) // len(pending)
        planned: list[tuple[ShapeRounds, list[CallPlan]]] = []
        for shape in pending:
            count = calls_that_fit(shape.trial, next_round_size(len(shape.samples), grade.policy), share)
            planned.append((shape, plan_timed_calls(grade.task, shape.trial, grade.device, grade.secret, count, start=len(shape.samples))))
        started = time.monotonic()
        calls = JobCalls(
            trials=[dataclasses.replace(shape.trial, calls=plans) for shape, plans in planned],
            shuffle_seed=grade.secret + result.rounds,
            warmups=[shape.warmup for shape, _ in planned if shape.warmup is not None],
        )
        judged = run_job(grade, calls, prefix="kgym-timing-")
        last_cost = time.monotonic() - started
        spent += last_cost
        result.rounds += 1
        if judged.verdict.status != Status.passed:
            result.failure = judged.verdict
            return result
        for shape, plans in planned:
            shape.rounds += 1
            shape.add(plans, judged.timed_by_trial.get(shape.trial.label, []))
