"""Suite-level figures from grades: one definition for the CLI, the harness and the leaderboard.

- `correct_rate`: passed grades / all tasks. A task an agent never got graded on
  (it gave up, or failed before its first submission) is passed in as
  `unattempted` and counts as a task that is neither correct nor fast.
- `fast_p` (p in 0, 1, 1.5, 2), against eager and against torch.compile: the
  fraction of all grades that passed AND whose speedup over that baseline is
  greater than p. A failed or rejected grade, or one whose baseline could not
  be measured, counts as not fast.
- `geomean_speedup` (per baseline): geometric mean of the speedups of passed
  grades that have one, reported with `geomean_count`, how many it covers.
- `median_sol_fraction`: median fraction of speed of light over passed grades
  that have one.

Interpreted (CPU) and GPU grades are never mixed: aggregating both raises.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence

from pydantic import ConfigDict, Field

from gym.schema.records import RecordModel
from gym.schema.result import GradeResult, Status

FAST_THRESHOLDS: tuple[float, ...] = (0.0, 1.0, 1.5, 2.0)


class BaselineFigures(RecordModel):
    model_config = ConfigDict(extra="forbid")

    fast: dict[str, float] = Field(description='"fast_0", "fast_1", "fast_1.5", "fast_2" -> fraction of all grades.')
    geomean_speedup: float | None = Field(
        description="Geometric mean speedup over passed grades with a measured speedup; None when there are none.",
    )
    geomean_count: int = Field(description="How many grades the geometric mean covers.")


class Aggregate(RecordModel):
    model_config = ConfigDict(extra="forbid")

    tasks: int = Field(description="Tasks aggregated: the grades plus the unattempted tasks.")
    passed: int = Field(description="Grades that passed.")
    correct_rate: float = Field(description="passed / tasks (0 when there are none).")
    eager: BaselineFigures = Field(description="fast_p and geometric-mean speedup against eager PyTorch.")
    compile: BaselineFigures = Field(description="fast_p and geometric-mean speedup against torch.compile.")
    median_sol_fraction: float | None = Field(
        description="Median fraction of speed of light over passed grades that have one; None when none do.",
    )
    interpreted: bool = Field(description="True when every grade was timed under the Triton interpreter (CPU).")
    dsls: dict[str, int] = Field(
        default_factory=dict,
        description='The grades by kernel language of their submission (GradeResult.dsl), e.g. {"triton": 40, "helion": 4}.',
    )


def fast_label(p: float) -> str:
    return f"fast_{p:g}"


def _baseline(grades: Sequence[GradeResult], speedups: list[float | None], unattempted: int = 0) -> BaselineFigures:
    total = len(grades) + unattempted
    fast = {
        fast_label(p): (sum(1 for grade, s in zip(grades, speedups) if grade.status == Status.passed and s is not None and s > p) / total if total else 0.0)
        for p in FAST_THRESHOLDS
    }
    measured = [s for grade, s in zip(grades, speedups) if grade.status == Status.passed and s is not None and s > 0]
    geomean = math.exp(statistics.fmean(math.log(s) for s in measured)) if measured else None
    return BaselineFigures(fast=fast, geomean_speedup=geomean, geomean_count=len(measured))


def is_interpreted(grade: GradeResult) -> bool | None:
    """True/False for timed grades; None when the grade carries no timing."""
    return grade.timings.interpreted if grade.timings is not None else None


def aggregate(grades: Sequence[GradeResult], unattempted: int = 0) -> Aggregate:
    """Figures over one grade per task (the episode's best), plus `unattempted` tasks without one."""
    if unattempted < 0:
        raise ValueError("unattempted must be >= 0")
    modes = {mode for mode in map(is_interpreted, grades) if mode is not None}
    if len(modes) > 1:
        raise ValueError("interpreted (CPU) and GPU timings cannot be aggregated together")
    passed = sum(1 for grade in grades if grade.status == Status.passed)
    fractions = [g.sol_fraction for g in grades if g.status == Status.passed and g.sol_fraction is not None]
    return Aggregate(
        tasks=len(grades) + unattempted,
        passed=passed,
        correct_rate=passed / (len(grades) + unattempted) if grades or unattempted else 0.0,
        eager=_baseline(grades, [g.speedup_vs_eager for g in grades], unattempted),
        compile=_baseline(grades, [g.speedup_vs_compile for g in grades], unattempted),
        median_sol_fraction=statistics.median(fractions) if fractions else None,
        interpreted=modes == {True},
        dsls=dict(sorted(Counter(grade.dsl for grade in grades).items())),
    )
