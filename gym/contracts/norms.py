"""Whole-tensor error checks: `normwise` and the precision-fair `oracle`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import torch
from pydantic import Field, PrivateAttr

from gym.contracts import spread
from gym.contracts.base import (
    CheckOutcome,
    TrialEvidence,
    ValueCheck,
    absolute_error,
    as_float64,
    nan_inf_mismatch,
)
from gym.contracts.elementwise import compare_each_output

# Honest evaluations number start .. stop - 1 (all when stop is None) of the reference on given inputs
# (gym.contracts.spread.honest_evaluations; gym.grading.planning.plan binds one).
HonestEvaluator = Callable[[dict[str, Any], int, int | None], list[list[torch.Tensor]]]
# How many evidences' honest errors an oracle check keeps (a grade's late calls share one trial's inputs).
_SPREAD_CACHE = 8


@dataclass
class _Spread:
    """An oracle check's honest errors on one evidence's inputs (gym.contracts.spread), as far as computed."""

    # The evidence's inputs and oracle outputs: the cache's key, by identity.
    inputs: Any
    oracle: list[torch.Tensor]
    # Per output, the worst honest evaluation's error vs the oracle so far.
    errors: list[float]
    # Whether every variant is in `errors` (else only the first spread.EARLY_VARIANTS).
    complete: bool = False


def _error_and_budget_mask(a: torch.Tensor, b: torch.Tensor, per_element_budget: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Absolute error per element (inf where NaN/Inf disagree) and the elements over `per_element_budget`."""
    error = absolute_error(a, b)
    return error, error > per_element_budget


def relative_norm_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """||a - b|| / ||b|| in float64 over positions that are not NaN/Inf on both sides;
    inf when NaN/Inf positions disagree; the absolute norm when ||b|| is 0."""
    x, y = as_float64(a), as_float64(b)
    nan, inf = nan_inf_mismatch(a, b)
    if bool((nan | inf).any()):
        return float("inf")
    finite = torch.isfinite(x) & torch.isfinite(y)
    difference = torch.linalg.vector_norm(x[finite] - y[finite]).item()
    scale = torch.linalg.vector_norm(y[finite]).item()
    return difference / scale if scale > 0 else difference


class NormwiseCheck(ValueCheck):
    """||got - expected|| / ||expected|| <= eps (Frobenius norm, computed in float64)."""

    kind: Literal["normwise"] = "normwise"
    eps: float = Field(gt=0)

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            figure = relative_norm_error(a, b)
            scale = torch.linalg.vector_norm(as_float64(b).nan_to_num(0, 0, 0)).item()
            budget = self.eps * (scale or 1.0) / max(b.numel(), 1) ** 0.5
            error, over = _error_and_budget_mask(a, b, budget)
            return error, over if figure > self.eps else torch.zeros_like(over), figure

        return compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: f"relative norm error {figure:.3g} (allowed {self.eps:g})",
            threshold=self.eps,
            brief=evidence.brief,
        )


class OracleCheck(ValueCheck):
    """Error against a float64 oracle is at most `factor` x the reference's own error + `floor`.

    The error is the max absolute difference (`metric = "max_abs"`) or the norm
    of the difference (`metric = "norm"`). Fair to kernels that sum in another
    order: they need only be no less precise than the reference, not identical.

    Calibrated (`with_spread`, bound by the grade's planner): "the reference's own error" is the
    worst error of the reference and of several honest float32 re-evaluations of it on the same
    inputs (gym.contracts.spread: other summation orders and blockings, online softmax, float32
    accumulation of float16 inputs, atomics in any order), not one draw.
    """

    _honest: HonestEvaluator | None = PrivateAttr(default=None)
    # The honest errors of the last few evidences (a grade's late calls share one trial's inputs).
    _spread_cache: list[_Spread] = PrivateAttr(default_factory=list)

    needs_oracle: ClassVar[bool] = True
    kind: Literal["oracle"] = "oracle"
    factor: float = Field(default=2.0, gt=0)
    floor: float = Field(default=0.0, ge=0)
    relative_floor: float = Field(
        default=0.0, ge=0, description="Added to the allowance, times the oracle's largest magnitude (a floor that scales with the output)."
    )
    metric: Literal["max_abs", "norm"] = "max_abs"

    def _error(self, a: torch.Tensor, oracle: torch.Tensor) -> float:
        x, y = as_float64(a), as_float64(oracle)
        nan, inf = nan_inf_mismatch(x, y)
        if bool((nan | inf).any()):
            return float("inf")
        finite = torch.isfinite(x) & torch.isfinite(y)
        diff = (x[finite] - y[finite]).abs()
        if not diff.numel():
            return 0.0
        return float(diff.max()) if self.metric == "max_abs" else float(torch.linalg.vector_norm(diff))

    def describe(self) -> str:
        text = super().describe()
        return text.replace(", relative_floor=0.0", "") if not self.relative_floor else text

    def _scale(self, oracle: torch.Tensor) -> float:
        if not self.relative_floor:
            return 0.0
        finite = as_float64(oracle)
        finite = finite[torch.isfinite(finite)]
        if not finite.numel():
            return 0.0
        return float(finite.abs().max()) if self.metric == "max_abs" else float(torch.linalg.vector_norm(finite))

    def with_spread(self, honest: HonestEvaluator) -> OracleCheck:
        """This check with its allowance calibrated on `honest` evaluations of the reference (see the class)."""
        copy = self.model_copy()
        copy._honest = honest
        copy._spread_cache = []
        return copy

    @property
    def calibrated(self) -> bool:
        return self._honest is not None and not spread.is_disabled()

    def honest_errors(self, evidence: TrialEvidence, complete: bool = False) -> list[float]:
        """Per output, the worst error vs the oracle over the honest evaluations on these inputs
        (empty when the check is not calibrated): the first spread.EARLY_VARIANTS, or with `complete`
        all of them. Cached per (inputs, oracle) objects."""
        if not self.calibrated or evidence.oracle is None or self._honest is None:
            return []
        entry = self._cached_spread(evidence)
        if entry is not None and (entry.complete or not complete):
            return entry.errors
        oracle = evidence.oracle
        if entry is None:
            entry = _Spread(evidence.inputs, oracle, [0.0] * len(oracle))
            self._spread_cache.append(entry)
            del self._spread_cache[:-_SPREAD_CACHE]
            start, stop = 0, None if complete else spread.EARLY_VARIANTS
        else:
            start, stop = spread.EARLY_VARIANTS, None
        variants = self._honest(evidence.inputs, start, stop)
        for outputs in variants:
            for index, truth in enumerate(oracle):
                if index < len(outputs) and outputs[index].shape == truth.shape:
                    entry.errors[index] = max(entry.errors[index], self._error(outputs[index], truth))
        entry.complete = stop is None or len(variants) < stop - start
        return entry.errors

    def _cached_spread(self, evidence: TrialEvidence) -> _Spread | None:
        """The cached honest errors of exactly these inputs and oracle (the same objects), if any."""
        return next((entry for entry in self._spread_cache if entry.inputs is evidence.inputs and entry.oracle is evidence.oracle), None)

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        """Judged first with the early honest variants; a candidate over that allowance is judged again
        with all of them (the allowance only grows, so the verdict is the one all of them give)."""
        outcome = self._compare(got, evidence, self.honest_errors(evidence))
        cached = self._cached_spread(evidence)
        if not outcome.passed and self.calibrated and evidence.oracle is not None and not (cached is not None and cached.complete):
            outcome = self._compare(got, evidence, self.honest_errors(evidence, complete=True))
        return outcome

    def _compare(self, got: list[torch.Tensor], evidence: TrialEvidence, honest: list[float]) -> CheckOutcome:
        if evidence.oracle is None:
            return CheckOutcome(kind=self.kind, passed=False, message="no oracle outputs were computed for this trial")
        oracle = evidence.oracle

        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            truth = oracle[index]
            reference_error = self._error(b, truth)
            if index < len(honest) and math.isfinite(honest[index]):
                reference_error = max(reference_error, honest[index])
            allowed = self.factor * reference_error + self.floor + self.relative_floor * self._scale(truth)
            candidate_error = self._error(a, truth)
            figure = candidate_error / allowed if allowed > 0 else (0.0 if candidate_error == 0 else float("inf"))
            error, over = _error_and_budget_mask(a, truth.to(a.dtype) if a.dtype.is_floating_point else truth, allowed)
            return error, over if figure > 1 else torch.zeros_like(over), figure

        return compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: (
                f"error vs the float64 oracle is {figure:.3g}x the allowance "
                f"({self.factor:g} x the reference's own error"
                + (" (the worst of the reference and its honest float32 re-evaluations)" if honest else "")
                + f" + {self.floor:g}"
                + (f" + {self.relative_floor:g} x the output's magnitude" if self.relative_floor else "")
                + f", metric {self.metric})"
            ),
            threshold=1.0,
            brief=evidence.brief,
        )
