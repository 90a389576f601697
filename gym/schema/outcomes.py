"""What a contract check reports: its outcome and element-level diagnostics (torch-free)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from gym.schema.records import RecordModel


class ResultModel(RecordModel):
    """Base for serialised results: unknown keys rejected (ignored by `read_record`), NaN/Inf kept as strings."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class WorstElement(ResultModel):
    index: list[int] = Field(description="Multi-dimensional index of the element in the output tensor.")
    got: float = Field(description="Candidate value at that index.")
    expected: float = Field(description="Reference value at that index.")
    error: float = Field(
        description="The check's own error measure at that index (absolute error, ULPs, ratio to tolerance...).",
    )


class Diagnostics(ResultModel):
    output: int = Field(default=0, description="Which output of the kernel's return value (0 for a single tensor).")
    elements: int = Field(default=0, description="Elements compared.")
    mismatched: int = Field(default=0, description="Elements that broke the check.")
    max_abs_error: float | None = Field(
        default=None,
        description="Largest absolute difference over finite pairs (None when not numeric).",
    )
    mean_abs_error: float | None = Field(
        default=None,
        description="Mean absolute difference over finite pairs (None when not numeric).",
    )
    max_rel_error: float | None = Field(
        default=None,
        description="Largest |got - expected| / |expected| over finite pairs with expected != 0.",
    )
    nan_mismatch: int = Field(default=0, description="Positions where exactly one side is NaN.")
    inf_mismatch: int = Field(
        default=0,
        description="Positions where the sides disagree on +Inf/-Inf (one side infinite, or opposite signs).",
    )
    worst: list[WorstElement] = Field(default_factory=list, description="The worst elements, worst first.")
    pattern: str | None = Field(
        default=None,
        description="A short human description of where the mismatches sit (tail, rows, all...).",
    )


class CheckOutcome(ResultModel):
    kind: str = Field(description='The check\'s kind, e.g. "allclose".')
    passed: bool = Field(description="Whether the check held on this trial.")
    figure: float | None = Field(
        default=None,
        description="The measured figure (max ULPs, relative norm error, overlap...); None when not applicable.",
    )
    threshold: float | None = Field(
        default=None,
        description="The bound the figure is compared against, when there is one.",
    )
    message: str = Field(description="One sentence for a person or an agent.")
    diagnostics: list[Diagnostics] = Field(
        default_factory=list,
        description="Element-level evidence, one entry per compared output.",
    )
