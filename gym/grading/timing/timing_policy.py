"""How long to time: warm-up by time, then rounds of timed calls until the
relative standard error of the median is under a target, the repetition cap is
reached, or the time budget is spent.

The candidate's first round of timed calls rides in the grading job itself,
shuffled among the correctness calls, so nothing in the sandbox can tell a
timed call from a checked one. Each further round is a job of its own: fresh
inputs for every call, every output checked against its own expected values.
The decision to go on is taken here, on the trusted side, from the samples.
"""

from __future__ import annotations

from enum import Enum

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gym.grading.timing.statistics import median_rse


class StopReason(str, Enum):
    # The relative standard error of the median fell under the target.
    rse_target = "rse_target"
    # The repetition cap was reached.
    max_reps = "max_reps"
    # The time budget for further rounds was spent (or is zero).
    budget = "budget"


class TimingPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Stop once the relative standard error of the median is at or under this.
    target_rse: float = Field(default=0.01, gt=0)
    # Timed calls in the first round (inside the grading job).
    min_reps: int = Field(ge=1)
    # No more timed calls than this in all rounds together.
    max_reps: int = Field(ge=1)
    # Wall-clock seconds further rounds may take, counted from the end of the first.
    budget_s: float = Field(ge=0)
    # Untimed warm-up before timing, in seconds of repeated calls (at least one call always).
    warmup_s: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> TimingPolicy:
        if self.max_reps < self.min_reps:
            raise ValueError("max_reps must be at least min_reps")
        return self

    @classmethod
    def for_device(cls, device: torch.device) -> TimingPolicy:
        """GPU: 20 calls, then rounds up to 100 within 20 s, after 25 ms of warm-up (do_bench's).
        CPU (interpreter): 3 calls and no further rounds; interpreted timings only check the harness."""
        if device.type == "cuda":
            return cls(min_reps=20, max_reps=100, budget_s=20.0, warmup_s=0.025)
        return cls(min_reps=3, max_reps=12, budget_s=0.0, warmup_s=0.0)


def stop_reason(samples: list[float], policy: TimingPolicy, spent_s: float, round_cost_s: float = 0.0) -> StopReason | None:
    """Why timing stops now, or None to run another round.

    `spent_s` is the time further rounds have taken so far; `round_cost_s` an
    estimate of the next round's (e.g. the last round's): a round that would end
    past the budget is not started.
    """
    rse = median_rse(samples) if samples else None
    if rse is not None and rse <= policy.target_rse:
        return StopReason.rse_target
    if len(samples) >= policy.max_reps:
        return StopReason.max_reps
    if spent_s + round_cost_s > policy.budget_s or policy.budget_s == 0:
        return StopReason.budget
    return None


def next_round_size(done: int, policy: TimingPolicy) -> int:
    """Double the samples each round (at least min_reps more), never past max_reps."""
    return max(0, min(policy.max_reps - done, max(done, policy.min_reps)))
