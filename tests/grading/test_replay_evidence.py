"""Accuse only with evidence (issue 37, target 4): a replay's failed value checks are `replay_mismatch`
only when the replayed answer is far from right; a rounding-sized miss or an atomics-order difference
gets the numeric status with the numbers and a hint (gym.grading.judging.replay_evidence)."""

from __future__ import annotations

import torch

from gym.contracts import AllcloseCheck, BitwiseCheck, CheckBase, CheckOutcome, DeterministicCheck, OracleCheck, TrialEvidence
from gym.grading.judging.replay_evidence import replay_failure_status
from gym.grading.planning.plan import Trial
from gym.schema.result import Status


def _trial(*checks: CheckBase) -> Trial:
    return Trial(
        label="float32 hidden #1",
        dtype=torch.float32,
        shape={"N": 64},
        hidden=True,
        inputs={},
        expected=[],
        returns_tuple=False,
        oracle=None,
        checks=list(checks),
    )


def _oracle_outcome(scale: float) -> tuple[OracleCheck, CheckOutcome]:
    generator = torch.Generator().manual_seed(0)
    truth = torch.randn(256, generator=generator, dtype=torch.float64)
    reference = truth.float()
    got = (truth + scale * 1e-6 * torch.randn(256, generator=generator, dtype=torch.float64)).float()
    check = OracleCheck(factor=2.0, floor=1e-6)
    outcome = check.compare([got], TrialEvidence(outputs=[got], expected=[reference], inputs={}, oracle=[truth], brief=True))
    return check, outcome


def test_a_rounding_sized_miss_is_wrong_answer_with_a_hint() -> None:
    check, outcome = _oracle_outcome(1.0)
    assert not outcome.passed and outcome.figure is not None and 1 < outcome.figure <= 4
    numeric = replay_failure_status(_trial(check), [outcome], atomics=False)
    assert numeric is not None and numeric.status == Status.wrong_answer
    assert "float32 hidden #1" in numeric.message and "allowance" in numeric.message and "allowance" in numeric.hint


def test_another_answer_is_accused() -> None:
    check, outcome = _oracle_outcome(1e5)
    assert replay_failure_status(_trial(check), [outcome], atomics=False) is None
    assert replay_failure_status(_trial(check), [outcome], atomics=True) is None


def test_atomics_widen_the_margin_only() -> None:
    check, outcome = _oracle_outcome(4.0)
    assert outcome.figure is not None and 4 < outcome.figure <= 16
    assert replay_failure_status(_trial(check), [outcome], atomics=False) is None
    numeric = replay_failure_status(_trial(check), [outcome], atomics=True)
    assert numeric is not None and numeric.status == Status.wrong_answer and "atomic" in numeric.hint


def test_bitwise_differences_of_atomics_order_are_numeric_but_other_bits_are_not() -> None:
    expected = torch.linspace(1, 2, 100)
    reordered = expected.clone()
    reordered[7] = torch.nextafter(reordered[7], torch.tensor(3.0))
    check = BitwiseCheck()
    close = check.compare([reordered], TrialEvidence(outputs=[reordered], expected=[expected], inputs={}))
    assert not close.passed
    assert replay_failure_status(_trial(check), [close], atomics=True) is not None
    assert replay_failure_status(_trial(check), [close], atomics=False) is None
    cached = torch.zeros_like(expected)
    far = check.compare([cached], TrialEvidence(outputs=[cached], expected=[expected], inputs={}))
    assert replay_failure_status(_trial(check), [far], atomics=True) is None


def test_structural_and_mixed_failures_are_accused() -> None:
    allclose = AllcloseCheck()
    wrong_shape = torch.zeros(3)
    outcome = allclose.compare([wrong_shape], TrialEvidence(outputs=[wrong_shape], expected=[torch.zeros(4)], inputs={}))
    assert replay_failure_status(_trial(allclose), [outcome], atomics=True) is None
    check, small = _oracle_outcome(1.0)
    assert replay_failure_status(_trial(check, allclose), [small, outcome], atomics=True) is None


def test_a_nondeterministic_replay_is_wrong_answer() -> None:
    check = DeterministicCheck(runs=2)
    a = torch.ones(8)
    b = a.clone()
    b[3] = 1.0000001
    outcome = check.evaluate(TrialEvidence(outputs=[a], expected=[a], inputs={}, repeats=[[b]]))
    assert not outcome.passed
    numeric = replay_failure_status(_trial(check), [outcome], atomics=True)
    assert numeric is not None and numeric.status == Status.wrong_answer and "run to run" in numeric.hint
