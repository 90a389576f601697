"""Implausible speedups are re-checked before they count (gym.grading.confirm)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from gym.grading import grader
from gym.grading.confirm import (
    DEFAULT_THRESHOLD,
    NOT_REPRODUCED,
    ConfirmThreshold,
    confirmation_secret,
    confirmed,
    is_confirmed,
    needs_confirmation,
)
from gym.grading.options import GradeOptions
from gym.grading.planning.plan import TimingRequest, plan_trials, timed_call_seed, timed_inputs
from gym.schema.result import GradeResult, Status
from gym.tasks.model import Task
from tests.support.fake_grades import fake_grade


def gpu_grade(eager: float | None = 8.0, compile_: float | None = 4.0, sol: float | None = 0.5, status: Status = Status.passed) -> GradeResult:
    result = fake_grade("l1/vector_add", "code", status, speedup=eager)
    return result.model_copy(update={"speedup_vs_compile": compile_ if status == Status.passed else None, "sol_fraction": sol})


class Regrade:
    """A fake re-grade: returns `result`, counts its calls."""

    def __init__(self, result: GradeResult) -> None:
        self.result = result
        self.calls = 0

    def __call__(self) -> GradeResult:
        self.calls += 1
        return self.result


def test_only_implausible_passes_need_confirmation() -> None:
    assert needs_confirmation(gpu_grade(compile_=4.0)) == "speedup 4x vs torch.compile exceeds 3x"
    assert needs_confirmation(gpu_grade(compile_=2.9)) is None
    assert needs_confirmation(gpu_grade(compile_=3.0)) is None  # "above" 3x
    assert needs_confirmation(gpu_grade(compile_=2.0, sol=1.2)) == "1.20 of speed of light exceeds 1"
    assert needs_confirmation(gpu_grade(status=Status.wrong_answer)) is None
    # Interpreted (CPU) grades have no torch.compile figure and no bound: never re-checked by default...
    cpu = fake_grade("l1/vector_add", "code", Status.passed, speedup=50.0)
    assert needs_confirmation(cpu) is None
    # ...unless an eager threshold asks for it.
    assert needs_confirmation(cpu, ConfirmThreshold(eager_ratio=10)) == "speedup 50x vs eager exceeds 10x"
    assert needs_confirmation(gpu_grade(compile_=4.0), ConfirmThreshold(compile_ratio=None)) is None
    # An infinite speedup (a zero time) is the most implausible of all; NaN is no figure.
    assert needs_confirmation(gpu_grade(compile_=float("inf"))) is not None
    assert needs_confirmation(gpu_grade(compile_=float("nan"))) is None


def test_not_needed_never_regrades() -> None:
    first = gpu_grade(compile_=1.5)
    regrade = Regrade(gpu_grade())
    assert confirmed(first, regrade) is first
    assert regrade.calls == 0


def test_reproduced_speedup_keeps_the_pass_and_records_both_figures() -> None:
    first = gpu_grade(eager=8.0, compile_=4.0)
    regrade = Regrade(gpu_grade(eager=6.0, compile_=3.1))
    result = confirmed(first, regrade)
    assert regrade.calls == 1
    assert result.status == Status.passed and is_confirmed(result)
    assert result.confirmation is not None
    assert result.confirmation.speedup_first == 8.0 and result.confirmation.speedup_second == 6.0
    assert result.confirmation.status_second == "passed" and "torch.compile" in result.confirmation.reason
    assert result.speedup_vs_eager == 8.0 and result.integrity_flags == []
    assert result.duration_s == pytest.approx(first.duration_s * 2)
    assert "Confirmed" in result.feedback and "6x" in result.feedback
    # Exactly half still reproduces.
    assert confirmed(first, Regrade(gpu_grade(eager=4.0))).status == Status.passed


def test_less_than_half_is_rejected_with_both_figures() -> None:
    result = confirmed(gpu_grade(eager=8.0, compile_=4.0), Regrade(gpu_grade(eager=3.9, compile_=1.0)))
    assert result.status == Status.rejected
    assert result.integrity_flags == [NOT_REPRODUCED]
    assert result.confirmation is not None and not result.confirmation.reproduced
    assert result.confirmation.speedup_first == 8.0 and result.confirmation.speedup_second == 3.9
    assert result.error is not None and "8x" in result.error and "3.9x" in result.error and "less than 0.5" in result.error
    # A rejected grade carries no speedup to rank or pay on; the figures live in `confirmation`.
    assert result.speedup_vs_eager is None and result.speedup_vs_compile is None
    assert "Status: rejected" in result.feedback and NOT_REPRODUCED in result.feedback
    assert not is_confirmed(result)


def test_failed_regrade_is_rejected() -> None:
    second = gpu_grade(status=Status.wrong_answer)
    result = confirmed(gpu_grade(), Regrade(second))
    assert result.status == Status.rejected and NOT_REPRODUCED in result.integrity_flags
    assert result.confirmation is not None and result.confirmation.status_second == "wrong_answer"
    assert result.error is not None and "did not pass" in result.error and "8x" in result.error and "no speedup" in result.error


def test_infra_error_regrade_confirms_nothing_and_blames_nothing() -> None:
    result = confirmed(gpu_grade(), Regrade(gpu_grade(status=Status.infra_error)))
    assert result.status == Status.infra_error and result.integrity_flags == []
    assert result.confirmation is not None and not result.confirmation.reproduced


def test_confirmation_secret_is_fresh_and_reproducible() -> None:
    assert confirmation_secret(None) is None
    assert confirmation_secret(7) == confirmation_secret(7) != 7
    assert confirmation_secret(7) != confirmation_secret(8)
    assert 0 <= (confirmation_secret(123) or 0) < 2**63


def test_the_regrade_runs_other_inputs_in_another_order(vector_add: Task) -> None:
    """The fresh secret gives every timed call other inputs, and the job another call order
    (gym.grading.running.job_files.write_job numbers the calls with a permutation drawn from the secret)."""
    import random

    cpu = torch.device("cpu")
    secret, again = 7, confirmation_secret(7)
    first = [plan.args["x"] for trial in plan_trials(vector_add, cpu, secret, timing=TimingRequest(reps=2)) for plan in trial.calls if plan.role == "timed"]
    second = [plan.args["x"] for trial in plan_trials(vector_add, cpu, again, timing=TimingRequest(reps=2)) for plan in trial.calls if plan.role == "timed"]
    assert len(first) == len(second) == 2 and not any(torch.equal(a, b) for a in first for b in second)
    ids, other = list(range(50)), list(range(50))
    random.Random(secret).shuffle(ids)
    random.Random(again).shuffle(other)
    assert ids != other


def test_grade_checks_once_and_never_rechecks_the_regrade(monkeypatch: pytest.MonkeyPatch, vector_add: Task) -> None:
    seen: list[int | None] = []

    def fake_once(task: Task | str, submission: Path | str, options: GradeOptions, **keywords: Any) -> GradeResult:
        seen.append(keywords["secret"])
        return gpu_grade(eager=8.0, compile_=5.0)  # always implausible, the re-grade too

    monkeypatch.setattr(grader, "_grade_once", fake_once)
    result = grader.grade(vector_add, vector_add.solution_path, secret=11)
    assert seen == [11, confirmation_secret(11)]
    assert result.status == Status.passed and is_confirmed(result)
    seen.clear()
    assert grader.grade(vector_add, vector_add.solution_path, GradeOptions(confirm=False), secret=11).confirmation is None
    assert seen == [11]
    seen.clear()
    # Without a secret both grades draw their own (None here, a fresh random one in _grade_once).
    grader.grade(vector_add, vector_add.solution_path)
    assert seen == [None, None]


def test_grade_takes_one_options_object_and_options_match() -> None:
    once = inspect.signature(grader._grade_once).parameters
    public = inspect.signature(grader.grade).parameters
    # grade() and _grade_once take the same (task, submission, options, device, secret, keep_job): every other setting is in GradeOptions.
    assert list(public) == list(once) == ["task", "submission", "options", "device", "secret", "keep_job"]
    options = GradeOptions(confirm_threshold=ConfirmThreshold(eager_ratio=2))
    assert {"confirm", "confirm_threshold"} <= set(GradeOptions.model_fields)
    assert options.confirm_threshold == ConfirmThreshold(eager_ratio=2)
    assert GradeOptions.model_validate_json(options.model_dump_json()) == options
    assert GradeOptions().confirm_threshold is None and DEFAULT_THRESHOLD.compile_ratio == 3.0


# A kernel whose speed depends on its input's values: when x[0] is above SLOW_ABOVE every program
# spins SPINS loop iterations (a legitimate data-dependent loop, correct either way). Which timed
# call is slow follows from the secret, so the two grades of one submission time differently.
SLOW_ABOVE = 1.0
SLOW_KERNEL = f"""
import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    spins = tl.where(tl.load(x_ptr) > {SLOW_ABOVE}, 4000, 0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, spins):
        acc = acc * 0.5
    tl.store(out_ptr + offs, x + y, mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
"""


def _first_timed_is_slow(task: Task, secret: int) -> bool:
    trial = plan_trials(task, torch.device("cpu"), secret, include_hidden=False)[0]
    inputs = timed_inputs(task, trial, timed_call_seed(task, trial, secret, 0), torch.device("cpu"))
    return bool(inputs["x"][0] > SLOW_ABOVE)


def _secret_whose_regrade_is_slow(task: Task) -> int:
    """A secret whose grade's one timed call is fast and whose confirmation grade's is slow."""
    for secret in range(1000):
        again = confirmation_secret(secret)
        assert again is not None
        if not _first_timed_is_slow(task, secret) and _first_timed_is_slow(task, again):
            return secret
    raise AssertionError("no secret found")


def test_a_submission_whose_second_run_is_slower_is_rejected(vector_add: Task, write_submission: Callable[..., Path]) -> None:
    """Real sandboxed grades: the first grade's timed call is fast, the re-grade's (another secret, so
    other inputs) is slow, so the re-check rejects the speedup. The eager threshold is lowered so an
    interpreted grade triggers it; replay and late calls are off only to keep the test short."""
    path = write_submission(SLOW_KERNEL)
    secret = _secret_whose_regrade_is_slow(vector_add)
    threshold = ConfirmThreshold(compile_ratio=None, eager_ratio=1e-9)
    result = grader.grade(vector_add, path, GradeOptions(timing_reps=1, late_calls=False, replay=False, confirm_threshold=threshold), secret=secret)
    assert result.status == Status.rejected, result.feedback
    assert result.integrity_flags == [NOT_REPRODUCED]
    confirmation = result.confirmation
    assert confirmation is not None and confirmation.status_second == "passed" and not confirmation.reproduced
    assert confirmation.speedup_first is not None and confirmation.speedup_second is not None
    assert confirmation.speedup_second < 0.5 * confirmation.speedup_first
    assert result.error is not None and "less than 0.5 of the first speedup" in result.error
    assert GradeResult.model_validate_json(result.model_dump_json()) == result
