"""A task's metadata for curricula and split reports (gym.schema.task_metadata.TaskMetadata).

Imported tasks carry what their importer measured (`[kernelbench]`: op kind, output
kind, aten op count, cost per shape); anything missing is measured here once per
task version by running the reference at its public shape, float32, under the op
trace and torch's FLOP counter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch
from torch.utils.flop_counter import FlopCounterMode

from gym.schema.task_metadata import TaskMetadata
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.model import Task
from gym.tasks.references import reference_outputs
from gym.tasks.shape_expr import evaluate
from gym.tasks.splits import family_of, source_of
from gym.worker.op_trace import OpTrace
from gym.worker.torch_policy import PLUMBING_OPS

_CONVOLUTION = re.compile(r"conv")


def output_kind(outputs: list[torch.Tensor]) -> str:
    """ "float", "int", "bool", or the mix ("float+int" for values and indices)."""
    kinds = {"bool" if t.dtype == torch.bool else ("float" if t.dtype.is_floating_point else "int") for t in outputs}
    return "+".join(sorted(kinds)) or "none"


def selects(outputs: list[torch.Tensor], inputs: list[torch.Tensor]) -> bool:
    """Every float output value is (bitwise) one of the float inputs' values or zero: a selection or permutation."""
    floats = [t for t in outputs if t.dtype.is_floating_point]
    pool = [t.detach().reshape(-1).double() for t in inputs if t.dtype.is_floating_point]
    if not floats or not pool:
        return False
    values = torch.cat([*pool, torch.zeros(1, dtype=torch.float64)])
    return all(bool(torch.isin(t.detach().reshape(-1).double(), values).all()) for t in floats)


def op_kind(compute_ops: list[str], outputs: list[torch.Tensor], inputs: list[torch.Tensor], flops: int) -> str:
    """convolution, matmul, composite (several compute ops), integer, selection, reduction or elementwise."""
    if any(_CONVOLUTION.search(op) for op in compute_ops):
        return "convolution"
    if flops:
        return "matmul"
    if len(compute_ops) > 1:
        return "composite"
    if output_kind(outputs) != "float":
        return "integer"
    if selects(outputs, inputs):
        return "selection"
    largest = max((t.numel() for t in inputs), default=0)
    return "reduction" if sum(t.numel() for t in outputs) < largest else "elementwise"


@dataclass(frozen=True)
class Measured:
    op_kind: str
    output_kind: str
    aten_ops: int
    flops: int


_MEASURED: dict[tuple[str, int, str], Measured] = {}


def measure_reference(task: Task) -> Measured:
    """The reference run once at the first public shape (float32, the grader's public inputs)."""
    key = (task.id, task.spec.version, str(task.folder))
    known = _MEASURED.get(key)
    if known is not None:
        return known
    shape = task.spec.shapes.public[0]
    inputs = generate_inputs(task, shape, torch.float32, public_seed(task.id, "float32", "public", 0), torch.device("cpu"))
    with torch.no_grad(), FlopCounterMode(display=False) as counter, OpTrace() as trace:
        outputs, _ = reference_outputs(task, inputs, shape)
    compute = sorted(op for op in trace.ops if op not in PLUMBING_OPS and op.startswith("aten."))
    tensors = [value for value in inputs.values() if isinstance(value, torch.Tensor)]
    flops = int(counter.get_total_flops())
    measured = Measured(op_kind=op_kind(compute, outputs, tensors, flops), output_kind=output_kind(outputs), aten_ops=len(compute), flops=flops)
    _MEASURED[key] = measured
    return measured


def level_of(task: Task) -> int:
    if task.spec.kernelbench is not None:
        return task.spec.kernelbench.level
    match = re.match(r"l(\d)", task.suite.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else 1


def _bench_cost(task: Task) -> tuple[int | None, int | None]:
    shapes = task.spec.shapes
    bench = shapes.bench[0] if shapes.bench else shapes.public[0]
    source = task.spec.kernelbench
    if source is not None:
        for entry in source.cost:
            if dict(entry.shape) == dict(bench):
                return entry.bytes, entry.flops
        return None, None
    names = {**bench, "itemsize": 4}
    try:
        return int(evaluate(task.spec.min_bytes, names)), int(evaluate(task.spec.min_flops, names))
    except (ValueError, ZeroDivisionError, TypeError):
        return None, None


def task_metadata(task: Task, measure: bool = True) -> TaskMetadata:
    """The task's metadata; `measure=False` leaves unknown what only running the reference would tell."""
    source = task.spec.kernelbench
    stored = (source.op_kind, source.output_kind, source.aten_ops) if source is not None else (None, None, None)
    kind, outputs, aten_ops = stored
    if measure and None in stored:
        try:
            measured = measure_reference(task)
        except Exception:  # noqa: BLE001 - metadata never stops a listing; check-tasks names a broken reference
            measured = None
        if measured is not None:
            kind, outputs, aten_ops = kind or measured.op_kind, outputs or measured.output_kind, aten_ops if aten_ops is not None else measured.aten_ops
    bench_bytes, bench_flops = _bench_cost(task)
    intensity = bench_flops / bench_bytes if bench_bytes and bench_flops is not None else None
    return TaskMetadata(
        source=source_of(task.id),
        level=level_of(task),
        split=str(task.split),
        family=family_of(task.id),
        op_kind=kind or "unknown",
        output_kind=outputs or "unknown",
        bench_bytes=bench_bytes,
        bench_flops=bench_flops,
        arithmetic_intensity=None if intensity is None or math.isnan(intensity) else round(intensity, 4),
        aten_ops=aten_ops,
    )
