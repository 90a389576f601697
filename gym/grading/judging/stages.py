"""Stage outputs of a block task: which part of a failing submission first goes outside its contract.

A task may declare named stages (`stages`, `stage_names`, `stage_rtol` in task.toml): its reference
is written as a composition of named intermediate results. A submission may return, after its outputs,
one tensor per stage in `stage_names` order: `(outputs..., *stages)`. The verdict is on the outputs
alone; the stages only inform the feedback: when a value check fails, each returned stage is compared
with the stages run in float64 on the trial's inputs (normwise relative error, exact for integer and
bool stages) and the first one past `stage_rtol` is named.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from gym.worker.protocol import CallRecord, OutputRecord


def split_stage_form(record: CallRecord, outputs_expected: int, returns_tuple: bool, stage_count: int) -> tuple[CallRecord, list[OutputRecord]]:
    """A call record in the stage form, `(outputs..., *stages)`, as a record of the outputs alone plus the
    stages' records; any other record unchanged, with no stages."""
    if not stage_count or record.container != "tuple" or len(record.outputs) != outputs_expected + stage_count:
        return record, []
    outputs = record.outputs[:outputs_expected]
    container = "tuple" if returns_tuple else "tensor"
    return record.model_copy(update={"container": container, "outputs": outputs}), record.outputs[outputs_expected:]


def stage_error(candidate: torch.Tensor, reference: torch.Tensor) -> tuple[float, str]:
    """How far one stage is from the float64 stage: (error, how it was measured); inf when it cannot compare."""
    if list(candidate.shape) != list(reference.shape):
        return math.inf, f"shape {list(candidate.shape)}, expected {list(reference.shape)}"
    if not reference.dtype.is_floating_point:
        differ = (
            int((candidate.to(reference.dtype) != reference).sum()) if candidate.dtype != torch.bool or reference.dtype == torch.bool else candidate.numel()
        )
        return (math.inf if differ else 0.0), f"{differ} of {reference.numel()} elements differ"
    got = candidate.detach().to(torch.float64)
    if not bool(torch.isfinite(got).all()):
        return math.inf, "holds inf or nan"
    scale = float(torch.linalg.vector_norm(reference))
    error = float(torch.linalg.vector_norm(got - reference)) / (scale if scale > 0 else 1.0)
    return error, f"normwise relative error {error:.3g}"


def first_divergent_stage(names: list[str], candidate: list[torch.Tensor], reference: dict[str, torch.Tensor], rtol: float) -> str:
    """One line for the feedback: the first stage past `rtol`, with the error of the stages before it."""
    within: list[str] = []
    for name, got in zip(names, candidate):
        error, how = stage_error(got, reference[name])
        if not error <= rtol:
            before = f" (before it, within {rtol:g}: {', '.join(within)})" if within else ""
            return f"first divergent stage: {name!r}, {how} (stage bound {rtol:g}){before}"
        within.append(f"{name} {error:.2g}")
    return f"every stage is within {rtol:g} of the float64 block ({', '.join(within)}): the divergence is after the last stage, {names[-1]!r}"


def stage_hint(names: list[str]) -> str:
    """What a submission that returned no stages is told."""
    return f"return (outputs..., {', '.join(names)}) to have the feedback name the first stage that diverges"


def stage_note(names: list[str], candidate: list[torch.Tensor] | None, reference: Callable[[], dict[str, torch.Tensor]], rtol: float) -> str:
    """The stage line for a failing trial: the first divergent stage, or the hint when no stages came back."""
    if not candidate:
        return stage_hint(names)
    try:
        expected = reference()
    except Exception as error:  # noqa: BLE001  (the note is advice: a stage function that fails must not change the verdict)
        return f"the task's stage function failed ({type(error).__name__}: {error}); no stage comparison"
    return first_divergent_stage(names, candidate, expected, rtol)


__all__ = ["first_divergent_stage", "split_stage_form", "stage_error", "stage_hint", "stage_note"]
