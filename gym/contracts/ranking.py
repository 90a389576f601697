"""`topk_overlap`: the candidate ranks the same items on top as the reference."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field

from gym.contracts.base import (
    CheckOutcome,
    Diagnostics,
    TrialEvidence,
    ValueCheck,
    WorstElement,
    as_float64,
    nan_inf_mismatch,
    nan_to,
    shape_problem,
    structural_outcome,
)

# Rounding slack when comparing a computed correlation with its bound (identical
# rankings can come out as 0.9999999999999998).
RANK_SLACK = 1e-9


def _rows(tensor: torch.Tensor) -> torch.Tensor:
    """float64 rows along the last dimension; NaN ranks last."""
    values = as_float64(tensor).reshape(-1, tensor.shape[-1]) if tensor.dim() else as_float64(tensor).reshape(1, 1)
    return nan_to(values, float("-inf"))


def _spearman(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Spearman rank correlation per row of two [rows, k] tensors."""
    rank_x = x.argsort(dim=1).argsort(dim=1).to(torch.float64)
    rank_y = y.argsort(dim=1).argsort(dim=1).to(torch.float64)
    rank_x = rank_x - rank_x.mean(dim=1, keepdim=True)
    rank_y = rank_y - rank_y.mean(dim=1, keepdim=True)
    denominator = (rank_x.norm(dim=1) * rank_y.norm(dim=1)).clamp_min(1e-300)
    return (rank_x * rank_y).sum(dim=1) / denominator


class TopkOverlapCheck(ValueCheck):
    """Per row (last dimension), the top-`k` index sets of candidate and reference overlap.

    Holds when the mean overlap fraction is >= `min_overlap`, every row's is >=
    `min_row_overlap`, and (when set) the mean Spearman correlation of the
    candidate's scores on the reference's top-k items is >= `min_rank_correlation`.
    """

    kind: Literal["topk_overlap"] = "topk_overlap"
    k: int = Field(ge=1)
    min_overlap: float = Field(ge=0, le=1)
    min_row_overlap: float = Field(default=0.0, ge=0, le=1)
    min_rank_correlation: float | None = Field(default=None, ge=-1, le=1)

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        diagnostics: list[Diagnostics] = []
        worst_mean = 1.0
        failures: list[str] = []
        for index in self.selected(len(evidence.expected)):
            if index >= len(evidence.expected):
                return structural_outcome(self.kind, index, f"named by the contract, but the reference returns only {len(evidence.expected)} output(s)")
            if index >= len(got):
                return structural_outcome(self.kind, index, "missing from the kernel's return value")
            expected = evidence.expected[index]
            problem = shape_problem(got[index], expected)
            if problem:
                return structural_outcome(self.kind, index, problem)
            nan, inf = nan_inf_mismatch(got[index], expected)
            candidate, reference = _rows(got[index]), _rows(expected)
            k = min(self.k, reference.shape[1])
            top_reference = reference.topk(k, dim=1).indices
            top_candidate = candidate.topk(k, dim=1).indices
            hits = (top_candidate.unsqueeze(2) == top_reference.unsqueeze(1)).any(dim=2).sum(dim=1)
            overlap = hits.to(torch.float64) / k
            mean = float(overlap.mean()) if overlap.numel() else 1.0
            worst_mean = min(worst_mean, mean)
            if mean < self.min_overlap:
                failures.append(f"output {index}: mean top-{k} overlap {mean:.3f} < {self.min_overlap}")
            if overlap.numel() and float(overlap.min()) < self.min_row_overlap:
                failures.append(f"output {index}: a row's top-{k} overlap is {float(overlap.min()):.3f} < {self.min_row_overlap}")
            if int(nan.sum()) or int(inf.sum()):
                failures.append(f"output {index}: NaN/Inf where the reference has none")
            if self.min_rank_correlation is not None and k > 1:
                correlation = float(_spearman(candidate.gather(1, top_reference), reference.gather(1, top_reference)).mean())
                if correlation < self.min_rank_correlation - RANK_SLACK:
                    failures.append(f"output {index}: rank correlation on the reference's top-{k} is {correlation:.3f} < {self.min_rank_correlation}")
            order = overlap.argsort()[:5]
            diagnostics.append(
                Diagnostics(
                    output=index,
                    elements=int(overlap.numel()),
                    mismatched=int((overlap < 1).sum()),
                    nan_mismatch=int(nan.sum()),
                    inf_mismatch=int(inf.sum()),
                    worst=[
                        WorstElement(index=[int(row)], got=float(overlap[row]), expected=1.0, error=1 - float(overlap[row]))
                        for row in order.tolist()
                        if float(overlap[row]) < 1
                    ],
                    pattern="rows listed in `worst` carry their top-k overlap fraction as `got`",
                )
            )
        message = "; ".join(failures) if failures else f"mean top-{self.k} overlap {worst_mean:.3f} (needed {self.min_overlap})"
        return CheckOutcome(
            kind=self.kind,
            passed=not failures,
            figure=worst_mean,
            threshold=self.min_overlap,
            message=message,
            diagnostics=diagnostics,
        )
