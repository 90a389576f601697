"""Element-by-element checks: `bitwise`, `allclose`, `ulp`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from pydantic import Field

from gym.contracts.base import (
    CheckBase,
    CheckOutcome,
    Diagnostics,
    TrialEvidence,
    ValueCheck,
    absolute_error,
    as_float64,
    element_diagnostics,
    nan_inf_mismatch,
    nan_to,
    shape_problem,
    structural_outcome,
)
from gym.worker.dtypes import bit_view

# Per-element measure of (got, expected, output index): (error per element, mismatch mask, figure for this output).
Measure = Callable[[torch.Tensor, torch.Tensor, int], tuple[torch.Tensor, torch.Tensor, float]]

# Defaults as in torch.testing.assert_close: dtype -> (rtol, atol).
ALLCLOSE_DEFAULTS: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}

# Float dtype -> mask of the magnitude bits in its same-width integer view.
_MAGNITUDE: dict[torch.dtype, int] = {
    torch.float64: 0x7FFFFFFFFFFFFFFF,
    torch.float32: 0x7FFFFFFF,
    torch.float16: 0x7FFF,
    torch.bfloat16: 0x7FFF,
}


def compare_each_output(
    check: CheckBase,
    got: list[torch.Tensor],
    expected: list[torch.Tensor],
    measure: Measure,
    describe: Callable[[float], str],
    threshold: float,
    worse: Callable[[float, float], float] = max,
    brief: bool = False,
) -> CheckOutcome:
    """Run `measure` on every selected output, fold the figures with `worse`;
    the check holds when the folded figure is at most `threshold`. `brief`: element
    diagnostics only for an output whose own figure is over the threshold."""
    diagnostics: list[Diagnostics] = []
    figure: float | None = None
    for index in check.selected(len(expected)):
        if index >= len(expected):
            return structural_outcome(check.kind, index, f"named by the contract, but the reference returns only {len(expected)} output(s)")
        if index >= len(got):
            return structural_outcome(check.kind, index, "missing from the kernel's return value")
        problem = shape_problem(got[index], expected[index])
        if problem:
            return structural_outcome(check.kind, index, problem)
        error, mismatch, output_figure = measure(got[index], expected[index], index)
        figure = output_figure if figure is None else worse(figure, output_figure)
        if not brief or output_figure > threshold:
            diagnostics.append(element_diagnostics(index, got[index], expected[index], error, mismatch))
    figure = 0.0 if figure is None else figure
    return CheckOutcome(
        kind=check.kind,
        passed=figure <= threshold,
        figure=figure,
        threshold=threshold,
        message=describe(figure),
        diagnostics=diagnostics,
    )


class BitwiseCheck(ValueCheck):
    """Outputs are bit-identical to the reference (-0.0 and +0.0 differ; NaN payloads too)."""

    kind: Literal["bitwise"] = "bitwise"

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            mismatch = bit_view(a) != bit_view(b)
            diff = nan_to((as_float64(a) - as_float64(b)).abs(), float("inf"))
            error = torch.where(mismatch, diff, torch.zeros_like(diff))
            return error, mismatch, float(mismatch.sum())

        return compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: "bit-identical to the reference" if figure == 0 else f"{int(figure)} element(s) differ from the reference bit pattern",
            threshold=0.0,
            brief=evidence.brief,
            worse=lambda x, y: x + y,
        )


class AllcloseCheck(ValueCheck):
    """|got - expected| <= atol + rtol * |expected| everywhere; NaN/Inf positions must agree."""

    kind: Literal["allclose"] = "allclose"
    # Relative tolerance; the dtype's torch.testing default when omitted.
    rtol: float | None = Field(default=None, ge=0)
    # Absolute tolerance; the dtype's torch.testing default when omitted.
    atol: float | None = Field(default=None, ge=0)

    def tolerances(self, dtype: torch.dtype) -> tuple[float, float]:
        default_rtol, default_atol = ALLCLOSE_DEFAULTS.get(dtype, (0.0, 0.0))
        return (
            self.rtol if self.rtol is not None else default_rtol,
            self.atol if self.atol is not None else default_atol,
        )

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        used: dict[str, float] = {}

        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            rtol, atol = self.tolerances(b.dtype)
            used.update(rtol=rtol, atol=atol)
            error = absolute_error(a, b)
            allowed = nan_to(atol + rtol * as_float64(b).abs(), 0.0)
            # Error over its allowance: NaN/Inf disagreements and any error where
            # nothing is allowed are infinitely over.
            ratio = torch.where(torch.isinf(error), error, error / allowed)
            ratio = torch.where(error == 0, torch.zeros_like(error), ratio)
            mismatch = ratio > 1.0
            return ratio, mismatch, float(ratio.max()) if ratio.numel() else 0.0

        outcome = compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: f"worst error is {figure:.3g}x the allowed atol + rtol*|expected|",
            threshold=1.0,
            brief=evidence.brief,
        )
        if used:
            outcome.message += f" (rtol={used['rtol']:g}, atol={used['atol']:g})"
        return outcome


def ulp_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Distance in units in the last place, as float64 (inf where NaN/Inf disagree)."""
    if a.dtype not in _MAGNITUDE:
        return (as_float64(a) - as_float64(b)).abs()
    magnitude = _MAGNITUDE[a.dtype]

    def ordered(tensor: torch.Tensor) -> torch.Tensor:
        bits = bit_view(tensor).to(torch.int64)
        return torch.where(bits < 0, -(bits & magnitude), bits)

    x, y = ordered(a), ordered(b)
    # Same sign: an exact integer difference. Opposite signs: the two magnitudes
    # added in float64 (an int64 difference could overflow for float64).
    same_sign = (x >= 0) == (y >= 0)
    distance = torch.where(
        same_sign,
        (x - torch.where(same_sign, y, x)).abs().to(torch.float64),
        x.abs().to(torch.float64) + y.abs().to(torch.float64),
    )
    nan, inf = nan_inf_mismatch(a, b)
    both_nan = torch.isnan(as_float64(a)) & torch.isnan(as_float64(b))
    distance = torch.where(both_nan, torch.zeros_like(distance), distance)
    return torch.where(nan | inf, torch.full_like(distance, float("inf")), distance)


class UlpCheck(ValueCheck):
    """Max distance in ULPs (of the output dtype) is at most `max_ulp`."""

    kind: Literal["ulp"] = "ulp"
    max_ulp: int = Field(ge=0)

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            distance = ulp_distance(a, b)
            return distance, distance > self.max_ulp, float(distance.max()) if distance.numel() else 0.0

        return compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: f"max distance {figure:g} ULP (allowed {self.max_ulp})",
            threshold=float(self.max_ulp),
            brief=evidence.brief,
        )
