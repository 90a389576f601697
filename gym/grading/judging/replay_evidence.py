"""Accuse only with evidence: what a replay's failed value checks say about the submission (issue 37, target 4).

The witness replays a call's kernels alone on fresh inputs of the same shape and judges the result
with the task's contract. When that fails, `replay_mismatch` (rejected) says "the result did not
come from those kernels". That is only what the evidence shows when the replayed answer is far from
right: an answer table, a cached result or work left to torch gives errors of the order of the
values themselves. A kernel whose replay misses the contract by a rounding-sized margin, or differs
only as its float atomics' order allows, ran the kernels it says it ran: its answer is numerically
short of the contract on those inputs, and the honest status is the numeric one (`wrong_answer`, or
`infra_error` where the check blames the task), with the numbers and a hint.

`replay_failure_status(trial, failed, atomics)` returns None to accuse (`replay_mismatch`), or a
`NumericReplayFailure` with the status, message and hint to report instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gym.contracts import CheckOutcome
from gym.grading.planning.plan import Trial
from gym.schema.result import Status

# How far past its allowance a tolerance check may be and still read as rounding, not as another
# answer: a kernel without atomics (deterministic, so only the fresh inputs differ from the call's);
# with float atomics, whose order changes from run to run on the same inputs.
ROUNDING_MARGIN = 4.0
ATOMICS_MARGIN = 16.0
# A bitwise (or deterministic) difference reads as rounding when no element is off by more than this, relatively.
ROUNDING_RELATIVE = 2.0**-10
# Checks whose figure is an error to keep under a threshold (lower is better).
_BOUNDED = frozenset({"allclose", "ulp", "normwise", "oracle", "logprob"})


@dataclass(frozen=True)
class NumericReplayFailure:
    """The status a failed replay gets instead of `replay_mismatch`, and what to tell the agent."""

    status: Status
    message: str
    hint: str


def _over(outcome: CheckOutcome) -> float:
    """How many times its allowance a failed check used (inf when it cannot be read as a ratio)."""
    figure, threshold = outcome.figure, outcome.threshold
    if figure is None or threshold is None or not math.isfinite(figure):
        return math.inf
    if outcome.kind == "topk_overlap":
        missed, allowed = 1.0 - figure, 1.0 - threshold
        return missed / allowed if allowed > 0 else math.inf
    if outcome.kind in _BOUNDED:
        return figure / threshold if threshold > 0 else math.inf
    return math.inf


def _rounding_sized(outcome: CheckOutcome) -> bool:
    """A bitwise or determinism failure whose differing elements are all rounding-sized (finite, relatively tiny)."""
    if not outcome.diagnostics:
        return False
    for diagnostics in outcome.diagnostics:
        if diagnostics.nan_mismatch or diagnostics.inf_mismatch:
            return False
        if diagnostics.mismatched and (diagnostics.max_rel_error is None or diagnostics.max_rel_error > ROUNDING_RELATIVE):
            return False
    return True


def _numeric(outcome: CheckOutcome, atomics: bool) -> bool:
    """Whether this failed check, on its own, reads as numbers short of the contract rather than another answer."""
    if outcome.kind == "deterministic":
        # Repeats in the witness cannot be staged by the submission: run-to-run differences are the kernel's own.
        return True
    if outcome.kind == "bitwise":
        return atomics and _rounding_sized(outcome)
    return _over(outcome) <= (ATOMICS_MARGIN if atomics else ROUNDING_MARGIN)


def replay_failure_status(trial: Trial, failed: list[CheckOutcome], atomics: bool) -> NumericReplayFailure | None:
    """None: the replay's failures point at the submission (accuse: `replay_mismatch`). Otherwise the
    numeric status with the numbers and a hint: every failed check is a value check missed by a margin
    that honest rounding explains (at most ROUNDING_MARGIN x its allowance; ATOMICS_MARGIN x, or a
    rounding-sized bitwise difference, when the kernels use float atomics), or a determinism failure."""
    if not failed or not all(_numeric(outcome, atomics) for outcome in failed):
        return None
    blames = {check.kind: check.blame for check in trial.checks}
    status = Status.infra_error if any(blames.get(outcome.kind) == "task" for outcome in failed) else Status.wrong_answer
    first = failed[0]
    worst = max(failed, key=_over)
    over = _over(worst)
    figures = "; ".join(f"{outcome.kind}: {outcome.message}" for outcome in failed)
    message = f"{trial.label}: on fresh inputs of the same shape (a replay of your kernels), {figures}"
    if first.kind == "deterministic" or (atomics and first.kind == "bitwise"):
        hint = (
            "your kernels give different bits from run to run (float atomics, or programs racing on shared memory apply in "
            "any order): this contract needs run-to-run identical results; reduce in a fixed order (one program per output, "
            "or partial results written out and summed in a second pass)"
        )
    elif atomics:
        hint = (
            f"your kernels accumulate with float atomics, whose order changes from run to run; here the error came to "
            f"{over:.3g}x the allowance. Accumulate each partial in float32 (or float64 for long sums) before the atomic, "
            "use fewer, larger partials, or reduce in a fixed order"
        )
    else:
        hint = (
            f"the error came to {over:.3g}x the allowance on these inputs although your call passed on its own: the kernel "
            "is close to the contract's edge. Accumulate in float32, keep the reference's order of scaling, and subtract "
            "the running maximum before exponentials"
        )
    return NumericReplayFailure(status=status, message=message, hint=hint)
