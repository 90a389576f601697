"""Checks on how the kernel behaves across runs: `deterministic`, `batch_invariant`.

Both compare the candidate with itself, bit for bit, so they need extra calls
that the grader schedules from the check's parameters.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field, model_validator

from gym.contracts.base import (
    CheckBase,
    CheckOutcome,
    Diagnostics,
    ExtraCall,
    TrialEvidence,
    structural_outcome,
)
from gym.contracts.elementwise import BitwiseCheck


def _bitwise_against(check: CheckBase, first: list[torch.Tensor], other: list[torch.Tensor], label: str) -> tuple[int, list[Diagnostics], str | None]:
    """Elements of `other` that differ bitwise from `first`, with diagnostics (or a structure problem)."""
    differing = 0
    diagnostics: list[Diagnostics] = []
    for index in check.selected(len(first)):
        if index >= len(first):
            return 0, [], f"the contract names output {index}, but the first run returned only {len(first)}"
        if index >= len(other):
            return 0, [], f"{label}: output {index} missing"
        a, b = other[index], first[index]
        if a.shape != b.shape or a.dtype != b.dtype:
            return 0, [], f"{label}: output {index} has shape {tuple(a.shape)}/{a.dtype}, first run {tuple(b.shape)}/{b.dtype}"
        outcome = BitwiseCheck().compare([a], TrialEvidence(outputs=[a], expected=[b], inputs={}))
        differing += int(outcome.figure or 0)
        if not outcome.passed:
            diagnostics.extend(d.model_copy(update={"output": index}) for d in outcome.diagnostics)
    return differing, diagnostics, None


class DeterministicCheck(CheckBase):
    """`runs` calls on identical inputs give bit-identical outputs."""

    kind: Literal["deterministic"] = "deterministic"
    # Total runs compared (the main call included).
    runs: int = Field(default=3, ge=2, le=20)

    def extra_calls(self, inputs: dict[str, Any]) -> list[ExtraCall]:
        return [ExtraCall(role="repeat", args=inputs) for _ in range(self.runs - 1)]

    def evaluate(self, evidence: TrialEvidence) -> CheckOutcome:
        if len(evidence.repeats) < self.runs - 1:
            return CheckOutcome(
                kind=self.kind,
                passed=False,
                message=f"only {len(evidence.repeats) + 1} of {self.runs} runs produced outputs",
            )
        total = 0
        diagnostics: list[Diagnostics] = []
        for number, repeat in enumerate(evidence.repeats[: self.runs - 1], start=2):
            differing, found, problem = _bitwise_against(self, evidence.outputs, repeat, f"run {number}")
            if problem:
                return structural_outcome(self.kind, 0, problem)
            total += differing
            diagnostics.extend(found)
        message = (
            f"{self.runs} runs on identical inputs are bit-identical"
            if total == 0
            else f"{total} element(s) changed between runs on identical inputs (atomics or a race?)"
        )
        return CheckOutcome(kind=self.kind, passed=total == 0, figure=float(total), threshold=0.0, message=message, diagnostics=diagnostics)


class BatchInvariantCheck(CheckBase):
    """Rows computed inside a sub-batch are bit-identical to the same rows of the full batch.

    `args` are the parameters batched along dimension 0; outputs are batched
    along dimension 0 too. Each `[start, stop)` in `sub_batches` is clamped
    to the batch size (negative values count from the end).
    """

    kind: Literal["batch_invariant"] = "batch_invariant"
    args: list[str] = Field(min_length=1)
    sub_batches: list[tuple[int, int]] = Field(default_factory=lambda: [(0, 1), (1, 3), (-2, -1)])

    @model_validator(mode="after")
    def _non_empty(self) -> BatchInvariantCheck:
        if not self.sub_batches:
            raise ValueError("batch_invariant needs at least one sub-batch")
        return self

    def extra_calls(self, inputs: dict[str, Any]) -> list[ExtraCall]:
        batch = min(int(inputs[name].shape[0]) for name in self.args)
        calls = []
        for start, stop in self.resolve(batch):
            sliced = {name: value[start:stop].clone() if name in self.args else value for name, value in inputs.items()}
            calls.append(ExtraCall(role="sub_batch", args=sliced, span=(start, stop)))
        return calls

    def resolve(self, batch: int) -> list[tuple[int, int]]:
        """The concrete, distinct, non-empty [start, stop) ranges for a batch of `batch` rows."""
        ranges: list[tuple[int, int]] = []
        for start, stop in self.sub_batches:
            start = max(0, min(batch, start + batch if start < 0 else start))
            stop = max(0, min(batch, stop + batch if stop < 0 else stop))
            if stop > start and (start, stop) != (0, batch) and (start, stop) not in ranges:
                ranges.append((start, stop))
        return ranges

    def evaluate(self, evidence: TrialEvidence) -> CheckOutcome:
        if not evidence.sub_batches:
            return CheckOutcome(kind=self.kind, passed=False, message="no sub-batch runs were made (batch too small?)")
        total = 0
        diagnostics: list[Diagnostics] = []
        for run in evidence.sub_batches:
            rows = [output[run.start : run.stop] for output in evidence.outputs]
            differing, found, problem = _bitwise_against(self, rows, run.outputs, f"rows [{run.start}, {run.stop})")
            if problem:
                return structural_outcome(self.kind, 0, problem)
            total += differing
            diagnostics.extend(found)
        spans = ", ".join(f"[{run.start}, {run.stop})" for run in evidence.sub_batches)
        message = (
            f"rows {spans} are bit-identical whether run alone or in the full batch"
            if total == 0
            else f"{total} element(s) differ between the full batch and sub-batches {spans} (the reduction strategy depends on the batch size?)"
        )
        return CheckOutcome(kind=self.kind, passed=total == 0, figure=float(total), threshold=0.0, message=message, diagnostics=diagnostics)
