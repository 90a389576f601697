"""`nontrivial`: a self-check on the task. Its inputs must separate the right
answer from trivial ones (zeros, a constant, an input passed through); if a
trivial answer would pass the contract's value checks, the task is broken."""

from __future__ import annotations

from typing import ClassVar, Literal

import torch

from gym.contracts.base import Blame, CheckBase, CheckOutcome, TrialEvidence


def trivial_answers(expected: list[torch.Tensor], inputs: dict[str, object]) -> dict[str, list[torch.Tensor]]:
    """Named trivial answers shaped like the expected outputs."""
    answers: dict[str, list[torch.Tensor]] = {
        "zeros": [torch.zeros_like(e) for e in expected],
        "ones": [torch.ones_like(e) for e in expected],
    }
    constants = []
    for e in expected:
        # The mean of a single value is that value: no trivial answer (a loss returns one number).
        if e.dtype.is_floating_point and e.numel() > 1:
            finite = e[torch.isfinite(e)]
            mean = finite.to(torch.float64).mean() if finite.numel() else torch.tensor(0.0, dtype=torch.float64)
            constants.append(torch.full_like(e, float(mean)))
        else:
            constants.append(torch.zeros_like(e))
    if any(e.dtype.is_floating_point and e.numel() > 1 for e in expected):
        answers["constant (mean of the expected output)"] = constants
    for name, value in inputs.items():
        if not isinstance(value, torch.Tensor):
            continue
        passed_through = []
        for e in expected:
            if value.numel() == e.numel():
                passed_through.append(value.detach().reshape(e.shape).to(e.dtype))
            else:
                passed_through.append(torch.zeros_like(e))
        if any(value.numel() == e.numel() for e in expected):
            answers[f"input {name!r} passed through"] = passed_through
    return answers


class NontrivialCheck(CheckBase):
    """No trivial answer (zeros, ones, the mean, an input passed through) passes the value checks."""

    kind: Literal["nontrivial"] = "nontrivial"
    # A trivial answer that passes means the task's inputs are too weak: the gym's fault.
    blame: ClassVar[Blame] = "task"

    def evaluate(self, evidence: TrialEvidence) -> CheckOutcome:
        value_checks = [check for check in evidence.value_checks if check.compares_values]
        if not value_checks:
            return CheckOutcome(kind=self.kind, passed=False, message="the contract has no value check to test trivial answers against")
        survivors: list[str] = []
        answers = trivial_answers(evidence.expected, evidence.inputs)
        for label, answer in answers.items():
            if all(check.compare(answer, evidence).passed for check in value_checks):
                survivors.append(label)
        if survivors:
            message = "the task's inputs do not separate the right answer from: " + ", ".join(survivors)
        else:
            message = f"all {len(answers)} trivial answers fail the contract"
        return CheckOutcome(kind=self.kind, passed=not survivors, figure=float(len(survivors)), threshold=0.0, message=message)
