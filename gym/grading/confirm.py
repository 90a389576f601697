"""Implausible speedups are re-checked before they count (GPU MODE's secret-run gate).

A pass whose speedup crosses a `ConfirmThreshold` (by default: above 3x vs
torch.compile, or a fraction of speed of light above 1) is graded once more
before its reward is paid or its row is published. The re-grade uses a fresh
secret: every trial and every timed call gets new inputs, and the job's call
ids (the order the worker runs its calls in: `gym.grading.running.job_files.write_job`
shuffles them with the secret) are a new permutation, so the calls run in
another order on other inputs. The secret is derived deterministically from
the first grade's when one was given (`confirmation_secret`: tests and replays
reproduce it) and drawn fresh otherwise.

`confirmed` returns the first grade with its `confirmation` set when the
re-grade passed with at least `reproduce_fraction` (half) of the first
speedup; otherwise the grade becomes `rejected` with the integrity flag
`speedup_not_reproduced`, its error naming both figures. A re-grade that ends
in `infra_error` (the gym's own failure) makes the grade an `infra_error`:
the speedup is not confirmed, and not blamed on the submission either. The
re-grade itself is never re-checked (`grade(..., confirm=False)`).

Torch-free at import: the leaderboard uses `needs_confirmation` and `is_confirmed` too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from gym.schema.result import GradeResult, Status
from gym.schema.signal import Confirmation

# The integrity flag of a speedup the confirmation grade did not reproduce.
NOT_REPRODUCED = "speedup_not_reproduced"
# Bits of a secret (gym.tasks.inputs.SEED_BITS; kept here so this module stays torch-free).
SECRET_BITS = 63


class ConfirmThreshold(BaseModel):
    """When a pass is re-graded before it counts, and what the re-grade must reach.

    Each trigger is off when None. On CPU (interpreted timings) torch.compile is
    not timed and there is no speed-of-light bound, so by default only GPU
    grades are ever re-checked; `eager_ratio` adds a trigger on the speedup vs
    eager PyTorch (tests lower it to re-check interpreted grades)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    compile_ratio: float | None = Field(default=3.0, gt=0, description="Re-check a pass more than this many times faster than torch.compile.")
    eager_ratio: float | None = Field(
        default=None, gt=0, description="Re-check a pass more than this many times faster than eager PyTorch (None: not on this figure)."
    )
    sol_fraction: float | None = Field(
        default=1.0,
        gt=0,
        description=(
            "Re-check a pass above this fraction of the hardware's speed of light. grade() already rejects a time beyond the bound "
            "(below_speed_of_light), so at 1.0 this only catches a result that reached a caller some other way."
        ),
    )
    reproduce_fraction: float = Field(default=0.5, gt=0, le=1, description="The re-grade must pass with at least this fraction of the first speedup.")


DEFAULT_THRESHOLD = ConfirmThreshold()


def _above(value: float | None, limit: float | None) -> bool:
    return value is not None and limit is not None and not math.isnan(value) and value > limit


def needs_confirmation(result: GradeResult, threshold: ConfirmThreshold = DEFAULT_THRESHOLD) -> str | None:
    """Why `result` must be re-graded before it counts (a sentence), or None: only a pass can need it."""
    if result.status != Status.passed:
        return None
    if _above(result.sol_fraction, threshold.sol_fraction):
        return f"{result.sol_fraction:.2f} of speed of light exceeds {threshold.sol_fraction:g}"
    if _above(result.speedup_vs_compile, threshold.compile_ratio):
        return f"speedup {result.speedup_vs_compile:.3g}x vs torch.compile exceeds {threshold.compile_ratio:g}x"
    if _above(result.speedup_vs_eager, threshold.eager_ratio):
        return f"speedup {result.speedup_vs_eager:.3g}x vs eager exceeds {threshold.eager_ratio:g}x"
    return None


def is_confirmed(result: GradeResult) -> bool:
    """True when `result` carries a confirmation grade that reproduced its speedup."""
    return result.confirmation is not None and result.confirmation.reproduced


def confirmation_secret(secret: int | None) -> int | None:
    """The re-grade's secret: derived from the first grade's (reproducible, never equal to it), or None
    (grade() then draws a fresh random one) when the first grade drew its own."""
    if secret is None:
        return None
    value = int.from_bytes(hashlib.sha256(f"confirm|{secret}".encode()).digest()[:8], "little") >> (64 - SECRET_BITS)
    return value if value != secret else value ^ 1


def _speedup(result: GradeResult) -> float | None:
    """The figure compared between the two grades: the speedup vs eager (vs torch.compile when eager has none)."""
    value = result.speedup_vs_eager if result.speedup_vs_eager is not None else result.speedup_vs_compile
    return value if value is not None and not math.isnan(value) else None


def _figure(value: float | None) -> str:
    return f"{value:.3g}x" if value is not None else "no speedup"


def confirmed(first: GradeResult, regrade: Callable[[], GradeResult], threshold: ConfirmThreshold = DEFAULT_THRESHOLD) -> GradeResult:
    """`first`, re-graded once by `regrade` when `needs_confirmation` says so (else returned unchanged).

    Reproduced (the re-grade passed with at least `threshold.reproduce_fraction` of the first
    speedup): `first` with `confirmation` set. Not reproduced: `rejected`, flag
    `speedup_not_reproduced`, speedups cleared (both figures stay in `confirmation`), the error
    naming both. A re-grade that is an `infra_error`: `infra_error`, nothing blamed. `duration_s`
    counts both grades. `regrade` must not re-check its own result (grade(..., confirm=False))."""
    reason = needs_confirmation(first, threshold)
    if reason is None:
        return first
    second = regrade()
    before, after = _speedup(first), _speedup(second)
    reproduced = second.status == Status.passed and (before is None or (after is not None and after >= threshold.reproduce_fraction * before))
    confirmation = Confirmation(reason=reason, speedup_first=before, speedup_second=after, status_second=second.status.value, reproduced=reproduced)
    duration = first.duration_s + second.duration_s
    if reproduced:
        note = f" Confirmed: the speedup was re-checked ({reason}); a second grade with a fresh secret and the calls in another order reached {_figure(after)}."
        return first.model_copy(update={"confirmation": confirmation, "duration_s": duration, "feedback": first.feedback + note})
    figures = f"first grade {_figure(before)}, confirmation grade {_figure(after)} ({second.status.value})"
    if second.status == Status.infra_error:
        status, flags = Status.infra_error, list(first.integrity_flags)
        error = f"the speedup needed a confirmation grade ({reason}), which failed on the gym's side ({figures}): {second.error or 'no detail'}"
    else:
        status, flags = Status.rejected, [*first.integrity_flags, NOT_REPRODUCED]
        why = "did not pass" if second.status != Status.passed else f"reached less than {threshold.reproduce_fraction:g} of the first speedup"
        error = (
            f"{NOT_REPRODUCED}: the speedup was re-checked ({reason}) with a fresh secret and the calls in another order, and the "
            f"confirmation grade {why}: {figures}" + (f"; its error: {second.error}" if second.error and second.status != Status.passed else "")
        )
    rejected = first.model_copy(
        update={
            "status": status,
            "integrity_flags": flags,
            "speedup_vs_eager": None,
            "speedup_vs_compile": None,
            "confirmation": confirmation,
            "error": error,
            "duration_s": duration,
        }
    )
    from gym.grading.feedback import write_feedback  # imports torch (gym.contracts): only here, so the site stays torch-free

    return rejected.model_copy(update={"feedback": write_feedback(rejected)})
