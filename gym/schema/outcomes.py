"""What a contract check reports: its outcome and element-level diagnostics (torch-free)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ResultModel(BaseModel):
    """Base for serialised results: unknown keys rejected, NaN/Inf kept as strings."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class WorstElement(ResultModel):
    # Multi-dimensional index of the element in the output tensor.
    index: list[int]
    # Candidate value at that index.
    got: float
    # Reference value at that index.
    expected: float
    # The check's own error measure at that index (absolute error, ULPs, ratio to tolerance...).
    error: float


class Diagnostics(ResultModel):
    # Which output of the kernel's return value (0 for a single tensor).
    output: int = 0
    # Elements compared.
    elements: int = 0
    # Elements that broke the check.
    mismatched: int = 0
    # Largest and mean absolute difference over finite pairs (None when not numeric).
    max_abs_error: float | None = None
    mean_abs_error: float | None = None
    # Largest |got - expected| / |expected| over finite pairs with expected != 0.
    max_rel_error: float | None = None
    # Positions where exactly one side is NaN.
    nan_mismatch: int = 0
    # Positions where the sides disagree on +Inf/-Inf (one side infinite, or opposite signs).
    inf_mismatch: int = 0
    # The worst elements, worst first.
    worst: list[WorstElement] = Field(default_factory=list)
    # A short human description of where the mismatches sit (tail, rows, all...).
    pattern: str | None = None


class CheckOutcome(ResultModel):
    # The check's kind, e.g. "allclose".
    kind: str
    # Whether the check held on this trial.
    passed: bool
    # The measured figure (max ULPs, relative norm error, overlap...); None when not applicable.
    figure: float | None = None
    # The bound the figure is compared against, when there is one.
    threshold: float | None = None
    # One sentence for a person or an agent.
    message: str
    # Element-level evidence, one entry per compared output.
    diagnostics: list[Diagnostics] = Field(default_factory=list)


