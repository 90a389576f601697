"""What every contract check shares: its result model, the evidence it reads,
and the element-level diagnostics (worst elements, NaN/Inf mismatches)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import torch
from pydantic import BaseModel, ConfigDict

from gym.schema.outcomes import CheckOutcome, Diagnostics, ResultModel, WorstElement
from gym.worker.dtypes import dtype_name

__all__ = ["CheckOutcome", "Diagnostics", "ResultModel", "WorstElement"]

WORST_SHOWN = 5


# Who is at fault when a check fails: the submission (`wrong_answer`) or the task itself (`infra_error`).
Blame = Literal["submission", "task"]


@dataclass(frozen=True)
class ExtraCall:
    """A call of the candidate a check needs beyond the trial's main call."""

    # "repeat": identical inputs again (shared by every check that asks for repeats);
    # "sub_batch": rows [span[0], span[1]) of the batched inputs.
    role: Literal["repeat", "sub_batch"]
    # Arguments by parameter name.
    args: dict[str, Any]
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class SubBatchRun:
    """The candidate run on rows [start, stop) of its batched inputs."""

    start: int
    stop: int
    outputs: list[torch.Tensor]


@dataclass
class TrialEvidence:
    """Everything a check may read about one trial (all on the trusted side)."""

    # Candidate outputs of the main call, in return order.
    outputs: list[torch.Tensor]
    # Reference outputs on the same inputs.
    expected: list[torch.Tensor]
    # The inputs the calls received, by parameter name.
    inputs: dict[str, Any]
    # Float64 oracle outputs, when some check needs them.
    oracle: list[torch.Tensor] | None = None
    # Candidate outputs of extra runs on identical inputs (for `deterministic`).
    repeats: list[list[torch.Tensor]] = field(default_factory=list)
    # Candidate outputs on sub-batches (for `batch_invariant`).
    sub_batches: list[SubBatchRun] = field(default_factory=list)
    # The contract's value checks, for the `nontrivial` self-check.
    value_checks: list[CheckBase] = field(default_factory=list)
    # Only the verdict matters (a call judged on its own: a timed, late or replayed call): element
    # diagnostics are computed for failing outputs only.
    brief: bool = False


class CheckBase(BaseModel):
    """A check in a task's contract. Subclasses set `kind` and implement evaluate()."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    if TYPE_CHECKING:
        # Declared for the type checker only: each subclass's own `kind: Literal[...]` field is
        # the discriminator, and a field here would make CheckBase's schema differ.
        kind: str

    # Which outputs (indices into the returned tuple) the check covers; all when omitted.
    outputs: list[int] | None = None
    # Dtype variants the check applies to; all when omitted.
    dtypes: list[str] | None = None

    # True for checks that compare an output with the reference (used by `nontrivial`).
    compares_values: ClassVar[bool] = False
    # True for checks that read the float64 oracle's outputs (the planner computes them).
    needs_oracle: ClassVar[bool] = False
    # Who is to blame when the check fails (the judge maps it to a status).
    blame: ClassVar[Blame] = "submission"

    def extra_calls(self, inputs: dict[str, Any]) -> list[ExtraCall]:
        """Calls this check needs beyond the main one, on a trial with these inputs (the planner asks)."""
        return []

    def applies_to(self, dtype: torch.dtype) -> bool:
        return self.dtypes is None or dtype_name(dtype) in self.dtypes

    def selected(self, count: int) -> list[int]:
        """The output indices the check covers (callers fail on indices >= count)."""
        if self.outputs is None:
            return list(range(count))
        return list(self.outputs)

    def describe(self) -> str:
        """The check in one line, as the agent's prompt shows it."""
        params = self.model_dump(exclude={"kind", "dtypes"}, exclude_none=True)
        rendered = ", ".join(f"{key}={value}" for key, value in params.items())
        return f"{self.kind}({rendered})" if rendered else f"{self.kind}"

    def evaluate(self, evidence: TrialEvidence) -> CheckOutcome:  # pragma: no cover - abstract
        raise NotImplementedError

    def compare(self, got: list[torch.Tensor], evidence: TrialEvidence) -> CheckOutcome:
        """Value checks: judge `got` against the evidence's expected outputs."""
        raise NotImplementedError(f"{self.kind} does not compare values")


class ValueCheck(CheckBase):
    """A check that compares outputs with the reference (`compare`), usable by `nontrivial`."""

    compares_values: ClassVar[bool] = True

    def evaluate(self, evidence: TrialEvidence) -> CheckOutcome:
        return self.compare(evidence.outputs, evidence)


def as_float64(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().to(torch.float64)


def nan_to(tensor: torch.Tensor, value: float) -> torch.Tensor:
    """NaN replaced by `value`; +-Inf left as they are (unlike Tensor.nan_to_num)."""
    return torch.where(torch.isnan(tensor), torch.full_like(tensor, value), tensor)


def nan_inf_mismatch(got: torch.Tensor, expected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean masks: NaN on exactly one side; Inf disagreement (position or sign)."""
    if not (got.dtype.is_floating_point or expected.dtype.is_floating_point):
        empty = torch.zeros(got.shape, dtype=torch.bool)
        return empty, empty
    a, b = as_float64(got), as_float64(expected)
    nan = torch.isnan(a) ^ torch.isnan(b)
    inf_a, inf_b = torch.isinf(a), torch.isinf(b)
    inf = (inf_a | inf_b) & ~nan & ~(inf_a & inf_b & (a == b))
    return nan, inf


def absolute_error(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """|got - expected| in float64: 0 where both sides are NaN or the same Inf,
    inf where NaN/Inf disagree (NaN is never a wildcard)."""
    x, y = as_float64(got), as_float64(expected)
    nan, inf = nan_inf_mismatch(got, expected)
    agree = (torch.isnan(x) & torch.isnan(y)) | (torch.isinf(x) & torch.isinf(y) & (x == y))
    error = torch.where(agree, torch.zeros_like(x), (x - y).abs())
    return nan_to(torch.where(nan | inf, torch.full_like(error, float("inf")), error), float("inf"))


def unravel(flat_index: int, shape: torch.Size) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat_index % size if size else 0)
        flat_index = flat_index // size if size else 0
    return list(reversed(index))


def describe_pattern(mismatch: torch.Tensor, got: torch.Tensor) -> str | None:
    """Where the mismatches sit, in words an agent can act on."""
    total = mismatch.numel()
    count = int(mismatch.sum())
    if count == 0 or total == 0:
        return None
    notes: list[str] = []
    if count == total:
        notes.append("every element is wrong")
    else:
        flat = mismatch.reshape(-1)
        first = int(torch.nonzero(flat)[0])
        if first >= total - count and bool(flat[first:].all()):
            notes.append(f"only the last {count} element(s) in memory order are wrong (a tail the kernel did not cover)")
        if mismatch.dim() >= 2 and mismatch.shape[-1] > 1:
            columns = mismatch.reshape(-1, mismatch.shape[-1]).any(dim=0)
            bad_columns = torch.nonzero(columns).reshape(-1)
            if bad_columns.numel() and int(bad_columns[0]) > 0 and bool(columns[int(bad_columns[0]) :].all()):
                notes.append(
                    f"mismatches are confined to the last {bad_columns.numel()} column(s) of each row (an unmasked or short tail along the last dimension)"
                )
            rows = mismatch.reshape(-1, mismatch.shape[-1]).any(dim=1)
            bad_rows = int(rows.sum())
            if 0 < bad_rows < rows.numel() and bool(rows[-bad_rows:].all()) and not bool(rows[: rows.numel() - bad_rows].any()):
                notes.append(f"only the last {bad_rows} row(s) are wrong (the grid does not cover every row)")
    wrong_values = as_float64(got)[mismatch] if got.dtype != torch.bool else got[mismatch].to(torch.float64)
    if wrong_values.numel() and bool((wrong_values == 0).all()):
        notes.append("the wrong elements are all zero (never written?)")
    elif wrong_values.numel() and bool(torch.isnan(wrong_values).all()):
        notes.append("the wrong elements are all NaN (out-of-bounds reads, overflow, or 0/0?)")
    return "; ".join(notes) if notes else None


def element_diagnostics(
    output: int,
    got: torch.Tensor,
    expected: torch.Tensor,
    error: torch.Tensor,
    mismatch: torch.Tensor,
) -> Diagnostics:
    """Diagnostics for one output: `error` is the check's per-element measure, `mismatch` its verdict."""
    nan, inf = nan_inf_mismatch(got, expected)
    a, b = as_float64(got), as_float64(expected)
    finite = torch.isfinite(a) & torch.isfinite(b)
    diff = (a - b).abs()
    max_abs = float(diff[finite].max()) if bool(finite.any()) else None
    mean_abs = float(diff[finite].mean()) if bool(finite.any()) else None
    nonzero = finite & (b != 0)
    max_rel = float((diff[nonzero] / b[nonzero].abs()).max()) if bool(nonzero.any()) else None
    ranking = torch.where(mismatch, nan_to(error.to(torch.float64), float("inf")), torch.full_like(a, -1.0))
    worst: list[WorstElement] = []
    if bool(mismatch.any()):
        flat = ranking.reshape(-1)
        top = torch.topk(flat, min(WORST_SHOWN, int(mismatch.sum()))).indices
        for flat_index in top.tolist():
            idx = unravel(flat_index, got.shape)
            worst.append(
                WorstElement(
                    index=idx,
                    got=float(a.reshape(-1)[flat_index]),
                    expected=float(b.reshape(-1)[flat_index]),
                    error=float(error.reshape(-1)[flat_index]),
                )
            )
    return Diagnostics(
        output=output,
        elements=got.numel(),
        mismatched=int(mismatch.sum()),
        max_abs_error=max_abs,
        mean_abs_error=mean_abs,
        max_rel_error=max_rel,
        nan_mismatch=int(nan.sum()),
        inf_mismatch=int(inf.sum()),
        worst=worst,
        pattern=describe_pattern(mismatch, got),
    )


def shape_problem(got: torch.Tensor, expected: torch.Tensor) -> str | None:
    """Structural differences that make a value comparison meaningless."""
    if got.shape != expected.shape:
        return f"shape {tuple(got.shape)} != expected {tuple(expected.shape)}"
    if got.dtype != expected.dtype:
        return f"dtype {dtype_name(got.dtype)} != expected {dtype_name(expected.dtype)}"
    return None


def structural_outcome(kind: str, output: int, problem: str) -> CheckOutcome:
    return CheckOutcome(kind=kind, passed=False, message=f"output {output}: {problem}")
