"""`logprob`: log-probabilities agree in max absolute difference and/or KL."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from gym.contracts.base import (
    CheckOutcome,
    TrialEvidence,
    ValueCheck,
    absolute_error,
    as_float64,
    nan_inf_mismatch,
    nan_to,
)
from gym.contracts.elementwise import compare_each_output


def kl_per_row(candidate: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """KL(reference || candidate) per row of log-probabilities along the last dimension."""
    p_log = as_float64(reference)
    q_log = as_float64(candidate)
    p = p_log.exp()
    term = p * (p_log - q_log)
    term = torch.where(p == 0, torch.zeros_like(term), term)
    return term.sum(dim=-1)


class LogprobCheck(ValueCheck):
    """Log-probabilities: max |got - expected| <= `max_abs` and/or max row KL(expected || got) <= `max_kl`."""

    kind: Literal["logprob"] = "logprob"
    max_abs: float | None = Field(default=None, gt=0)
    max_kl: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_bound(self) -> LogprobCheck:
        if self.max_abs is None and self.max_kl is None:
            raise ValueError("logprob needs max_abs, max_kl or both")
        return self

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        def measure(a: torch.Tensor, b: torch.Tensor, index: int) -> tuple[torch.Tensor, torch.Tensor, float]:
            nan, inf = nan_inf_mismatch(a, b)
            error = absolute_error(a, b)
            figure = 0.0
            mismatch = torch.zeros_like(error, dtype=torch.bool)
            if self.max_abs is not None:
                figure = max(figure, float(error.max()) / self.max_abs if error.numel() else 0.0)
                mismatch |= error > self.max_abs
            if self.max_kl is not None and a.dim() >= 1 and a.numel():
                kl = nan_to(kl_per_row(a, b), float("inf"))
                figure = max(figure, float(kl.max()) / self.max_kl)
                mismatch |= (kl > self.max_kl).unsqueeze(-1).expand_as(mismatch)
            if bool((nan | inf).any()):
                figure = float("inf")
            return error, mismatch, figure

        bounds = ", ".join(
            part
            for part in (
                f"max_abs={self.max_abs:g}" if self.max_abs is not None else "",
                f"max_kl={self.max_kl:g}" if self.max_kl is not None else "",
            )
            if part
        )
        return compare_each_output(
            self,
            got,
            evidence.expected,
            measure,
            lambda figure: f"worst log-prob error is {figure:.3g}x the bound ({bounds})",
            threshold=1.0,
            brief=evidence.brief,
        )
