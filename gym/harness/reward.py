"""Reward: a documented, configurable function of a grade.

- `rejected` (an integrity rule broken): `rejected` (default -1). Never positive.
- `compile_error`, `runtime_error`, `timeout`, `wrong_answer`: `failed` (default 0).
- `infra_error` (the gym's fault, not the agent's): `infra` (default 0).
- `passed`: `correct` (default 1) + `speedup_weight` (default 0.5) x log2(speedup vs
  eager), the log clipped to [-1, `max_log2_speedup`] (default 3, i.e. 8x); a pass
  without a measured speedup earns `correct` alone. With the defaults a pass is
  worth 0.5 to 2.5 and always more than any failure.
"""

from __future__ import annotations

import math

from pydantic import Field, model_validator

from gym.schema.episode import HarnessModel
from gym.schema.result import GradeResult, Status


class RewardConfig(HarnessModel):
    correct: float = Field(default=1.0, description="Reward for a pass, before the speedup term.")
    speedup_weight: float = Field(
        default=0.5,
        ge=0,
        description="Weight of log2(speedup vs eager) added to a pass's reward.",
    )
    max_log2_speedup: float = Field(
        default=3.0,
        ge=0,
        description="Upper clip of log2(speedup vs eager) (the lower clip is -1).",
    )
    failed: float = Field(default=0.0, description="Reward for compile_error, runtime_error, timeout and wrong_answer.")
    infra: float = Field(default=0.0, description="Reward for infra_error (the gym's fault, not the agent's).")
    rejected: float = Field(
        default=-1.0,
        le=0,
        description=("Reward for a rejected submission; must be <= 0: a rejected submission never earns a positive reward."),
    )

    @model_validator(mode="after")
    def _pass_beats_failure(self) -> RewardConfig:
        if self.correct - self.speedup_weight <= max(self.failed, self.rejected):
            raise ValueError("a slow pass (correct - speedup_weight) must still earn more than a failure")
        return self


def reward_for(grade: GradeResult, config: RewardConfig | None = None) -> float:
    config = config or RewardConfig()
    if grade.status == Status.rejected or grade.integrity_flags:
        return min(config.rejected, 0.0)
    if grade.status == Status.infra_error:
        return config.infra
    if grade.status != Status.passed:
        return config.failed
    speedup = grade.speedup_vs_eager
    if speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return config.correct
    log2 = min(max(math.log2(speedup), -1.0), config.max_log2_speedup)
    return config.correct + config.speedup_weight * log2
