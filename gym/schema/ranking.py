"""The ranking rule: which of two grades is better (torch-free).

One definition for `Env`'s best attempt, the runner's resume and the
leaderboard's best result per task: a pass beats any failure; between passes,
the higher speedup vs eager wins; among equals the earliest is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from gym.schema.episode import GradeSummary
from gym.schema.result import GradeResult, Status

Item = TypeVar("Item")


def better(candidate: GradeSummary, best: GradeSummary | None) -> bool:
    """A pass beats any failure; between passes, the higher speedup vs eager wins."""
    if best is None:
        return True
    if (candidate.status == Status.passed) != (best.status == Status.passed):
        return candidate.status == Status.passed
    return (candidate.speedup_vs_eager or 0.0) > (best.speedup_vs_eager or 0.0)


def best_graded(items: Iterable[Item], grade_of: Callable[[Item], GradeResult]) -> Item | None:
    """The item whose grade is best by `better` (the earliest among equals); None when empty."""
    chosen: Item | None = None
    chosen_summary: GradeSummary | None = None
    for item in items:
        summary = GradeSummary.of(grade_of(item))
        if better(summary, chosen_summary):
            chosen, chosen_summary = item, summary
    return chosen
