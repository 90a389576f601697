"""`kgym import opinfo`: PyTorch's OpInfo ops as task folders `opinfo/<op>[__<variant>]`.

Each op's chosen sample (gym.tasks.opinfo.samples) is written as a KernelBench-format
`problem.py` (gym.tasks.opinfo.problem_source) and imported by the KernelBench
machinery: the same scaling to public, hidden and bench shapes, the same
Model-to-kernel mapping, the same `[kernelbench]` table (with `source_path`
naming the op and sample, and `checkout` the torch release), so grading,
`kgym show` and `kgym check-tasks` treat it as any imported problem. The op kind
is read from what the written problem dispatches at its public shape
(gym.tasks.metadata.problem_dispatch: the aten overloads, recorded as `dispatched`, and their
schemas), never from the op's name, and the contract follows the kind
(gym.tasks.contract_presets.kind_contract): integer, bool and selection outputs (every value one
of the inputs', like sort, gather or max) are bitwise; other float outputs are compared against
the float64 oracle, max-abs for elementwise and indexing ops and normwise for the other kinds,
with a sanity bound that is never tighter than the reference's own distance from the truth at
each dtype (gym.tasks.contract_presets.calibrate_bounds); always nontrivial.

Re-importing is idempotent: an op whose generated problem and importer are
unchanged is left alone (its check-tasks verdict included); a changed one gets
version + 1. An op left out is named in the report with its reason.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, Field

from gym.errors import ProblemError
from gym.tasks.contract_presets import calibrated_document, kind_contract
from gym.tasks.kernelbench.importer import (
    PROBLEM_FILE,
    existing_document,
    parameter_names,
    scale_and_probe,
    shape_tables,
    without_none,
)
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate, parse_problem
from gym.tasks.metadata import kind_of_op, problem_dispatch
from gym.tasks.opinfo.preconditions import apply_preconditions
from gym.tasks.opinfo.problem_source import MODES, bench_problem, render
from gym.tasks.opinfo.samples import REASONS, Excluded, OpEntry, SampleCase, load_op_db, qualifying_samples
from gym.tasks.splits import op_sequence

# Bumped whenever the importer would write a different task for the same op (sampling, scaling, contract).
# 2: the op kind from the dispatched ops, the contract from the kind, sanity bounds calibrated per dtype.
# 3: a dtype whose calibrated bound passes MAX_SANITY_BOUND (bfloat16 polygamma, ...) is left out.
IMPORTER_VERSION = 3
SUITE = "opinfo"
# Qualifying samples tried, best first, for one whose outputs depend on its inputs.
SAMPLES_TRIED = 8


class OpImport(BaseModel):
    """What happened to one OpInfo entry."""

    op: str = Field(description='The OpInfo name and variant ("nn.functional.gelu", "max.reduction_with_dim").')
    task_id: str | None = Field(default=None, description="The task it became, when it imported.")
    outcome: Literal["new", "updated", "unchanged", "excluded", "failed"] = Field(
        description="new / updated (version bumped) / unchanged / excluded (not a kernel task: see reason) / failed (a qualifying sample did not import)."
    )
    version: int | None = Field(default=None, description="The task version written or kept.")
    reason: str | None = Field(default=None, description=f"Why it was left out: one of {', '.join(REASONS)}, or the import failure.")
    detail: str | None = Field(default=None, description="The specifics of the reason.")


class OpInfoImportReport(BaseModel):
    """The result of importing the OpInfo database."""

    torch_version: str = Field(description="The torch release whose op database was read.")
    out: str = Field(description="The task root written into.")
    ops: list[OpImport] = Field(default_factory=list, description="One entry per OpInfo entry, in op_db order.")

    def count(self, outcome: str) -> int:
        return sum(1 for op in self.ops if op.outcome == outcome)

    def reasons(self) -> dict[str, list[str]]:
        """The ops left out (excluded or failed), by reason."""
        found: dict[str, list[str]] = {}
        for op in self.ops:
            if op.outcome in ("excluded", "failed"):
                found.setdefault(op.reason or "failed", []).append(op.op)
        return found


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "op"


def task_id_of(entry: OpEntry) -> str:
    """`opinfo/<op>` or `opinfo/<op>__<variant>` (dots and dashes as underscores; see below for case and dunders)."""
    name = _slug(entry.name)
    # Names that differ from another's only in case or dunders ("T" and "t", "__rsub__" and "rsub").
    if entry.name.startswith("__"):
        name = f"dunder_{name}"
    if entry.name != entry.name.lower():
        name = f"{name}_upper"
    return f"{SUITE}/{name}" + (f"__{_slug(entry.variant)}" if entry.variant else "")


def kind_of(case: SampleCase) -> str:
    """The op kind of a sample's one compute op (gym.tasks.metadata.kind_of_op: the op and its schema, the sample's outputs)."""
    return kind_of_op(case.compute_op, case.output_kind, case.reduces)


def contract_for(case: SampleCase) -> list[dict[str, Any]]:
    """The contract the sample's op kind calls for (gym.tasks.contract_presets.kind_contract), before calibration."""
    return kind_contract(kind_of(case), case.output_kind, case.selected)


def _run_problem(source: str, label: str, seed: int, dtype: torch.dtype, sizes: dict[str, int] | None = None) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The problem's inputs and outputs at `sizes` (its own by default) under `seed`, float inputs cast to `dtype`."""
    module = instantiate(source, sizes or {}, label)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = module.Model(*init_inputs(module))
        inputs = [value.to(dtype) if isinstance(value, torch.Tensor) and value.is_floating_point() else value for value in forward_inputs(module)]
    with torch.no_grad():
        result = model(*inputs)
    outputs = [result] if isinstance(result, torch.Tensor) else list(result)
    return [value for value in inputs if isinstance(value, torch.Tensor)], outputs


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().double().reshape(-1).nan_to_num(nan=0.125, posinf=1e300, neginf=-1e300) if tensor.is_floating_point() else tensor.reshape(-1)


def _informative(source: str, label: str, dtype: torch.dtype, sizes: dict[str, int] | None = None) -> str | None:
    """Why the problem's outputs say nothing about its inputs under `dtype` at `sizes` (None when they
    do): the same for two seeds, a copy of an input, or nothing but infinities and NaNs."""
    try:
        inputs, first = _run_problem(source, label, 0, dtype, sizes)
        _, second = _run_problem(source, label, 1, dtype, sizes)
    except Exception as error:  # noqa: BLE001 - the reason is reported
        return f"{type(error).__name__}: {str(error)[:200]}"
    if all(a.shape == b.shape and torch.equal(_bits(a), _bits(b)) for a, b in zip(first, second)):
        return "the outputs are the same for two seeds"
    for output in first:
        if any(value.numel() == output.numel() and value.dtype == output.dtype and torch.equal(_bits(value), _bits(output)) for value in inputs):
            return "an output is a copy of an input"
    if all(t.is_floating_point() and t.numel() and not bool(torch.isfinite(t).any()) for t in first):
        return "the outputs are all infinities or NaNs"
    return None


def choose_mode(case: SampleCase, label: str) -> tuple[str, str] | str:
    """The first way of drawing float inputs (problem_source.MODES) under which the op's float32
    outputs depend on its inputs, with that problem's source at the sample's sizes; else why none does."""
    reasons = []
    for mode in MODES:
        source = render(case, torch.__version__, mode)
        reason = _informative(source, label, torch.float32)
        if reason is None:
            return mode, source
        reasons.append(f"{mode}: {reason}")
    return "; ".join(reasons)


def _dtypes(entry: OpEntry, source: str, label: str, shapes: list[dict[str, int]]) -> tuple[list[str], list[str], dict[str, str]]:
    """float32; float16 where the op takes it on the CPU and its outputs still depend on the inputs
    there at every graded shape (a max over a bounded range, a long dot product, saturate in half
    precision); bfloat16 only on a GPU (as for every task). The validation exemptions that go with them."""
    dtypes = ["float32"]
    exempt: dict[str, str] = {}
    if entry.info.supports_dtype(torch.float16, "cpu") and all(_informative(source, label, torch.float16, shape) is None for shape in shapes):
        dtypes.append("float16")
    _, full = _run_problem(source, label, 0, torch.float32, shapes[0])
    try:
        _, half = _run_problem(source, label, 0, torch.float16, shapes[0])
    except Exception:  # noqa: BLE001 - no float16 on the CPU: nothing to compare
        half = []
    if half and all(a.shape == b.shape and torch.equal(_bits(a.to(b.dtype) if a.is_floating_point() else a), _bits(b)) for a, b in zip(half, full)):
        exempt["float16_reference_passes"] = (
            "the op's outputs are exact from float16 inputs (a sign, a rounding, a selection): a half-precision kernel is as right"
        )
    gpu_only = ["bfloat16"] if entry.info.supports_dtype(torch.bfloat16, "cpu") else []
    return dtypes, gpu_only, exempt


def task_document(entry: OpEntry, case: SampleCase, task_id: str, version: int, source: str, growth: list[str], mode: str) -> dict[str, Any]:
    problem = parse_problem(source)
    scaled, probe = scale_and_probe(problem, task_id)
    forward = problem.forward_params[: probe.input_count]
    params, state = parameter_names(forward, probe.state_keys)
    description = (
        f"PyTorch op `{entry.full_name}` (OpInfo sample {case.index}): implement Model.forward of the problem file below, which calls "
        f"{case.callee} and dispatches {case.compute_op}"
        + (f". {case.docstring}" if case.docstring else "")
        + ". All of the computation must run in your Triton kernels (torch for allocation, views and launch plumbing only). "
        "Sizes here are scaled for grading; the problem's own sizes are the benchmark shape."
    )
    shapes, cost = shape_tables(source, scaled, task_id)
    dtypes, gpu_only, exempt = _dtypes(entry, source, task_id, [scaled.public, *scaled.hidden])
    dispatch = problem_dispatch(source, scaled.public, task_id)
    kind = dispatch.kind
    document: dict[str, Any] = {
        "id": task_id,
        "version": version,
        "title": f"OpInfo {entry.full_name}",
        "description": description,
        "params": params,
        "dtypes": dtypes,
        "gpu_only_dtypes": gpu_only,
        "min_bytes": "0",
        "min_flops": "0",
        "timeout_s": 300.0,
        "shapes": shapes,
        "contract": kind_contract(kind, dispatch.output_kind, dispatch.selected),
        "validation_exempt": exempt,
        "kernelbench": {
            "level": 1,
            "problem_file": PROBLEM_FILE,
            "source_path": f"op_db/{entry.full_name}/sample{case.index}",
            "checkout": f"torch {torch.__version__} OpInfo",
            "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "importer_version": IMPORTER_VERSION,
            "forward_inputs": params[: len(forward)],
            "state": state,
            "cost": cost,
            "scaling": "; ".join([f"float inputs drawn {mode}", *growth, *scaled.notes]),
            "op_kind": kind,
            "output_kind": dispatch.output_kind,
            "aten_ops": len(op_sequence(dispatch.ops)),
            "dispatched": list(dispatch.ops),
        },
    }
    return document


def import_entry(entry: OpEntry, out: Path) -> OpImport:
    """Import one OpInfo entry into `out` (see the module docstring)."""
    import tomli_w

    task_id = task_id_of(entry)
    cases = qualifying_samples(entry, refine=apply_preconditions)
    if isinstance(cases, Excluded):
        return OpImport(op=entry.full_name, outcome="excluded", reason=cases.reason, detail=cases.detail)
    # The best sample whose outputs depend on its inputs under some way of drawing them.
    picked: tuple[SampleCase, str] | None = None
    first_reason = ""
    for case in cases[:SAMPLES_TRIED]:
        chosen_mode = choose_mode(case, task_id)
        if not isinstance(chosen_mode, str):
            picked = (case, chosen_mode[0])
            break
        first_reason = first_reason or f"sample {case.index}: {chosen_mode}"
    if picked is None:
        return OpImport(op=entry.full_name, task_id=task_id, outcome="excluded", reason="uninformative", detail=first_reason[:500])
    chosen, mode = picked
    try:
        source, growth = bench_problem(chosen, torch.__version__, task_id, mode)
    except ProblemError as error:
        return OpImport(op=entry.full_name, task_id=task_id, outcome="failed", reason="scaling", detail=str(error))
    sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest()
    folder = out / task_id
    existing = existing_document(folder)
    origin = (existing or {}).get("kernelbench", {})
    if existing is not None and origin.get("sha256") == sha256 and origin.get("importer_version") == IMPORTER_VERSION:
        return OpImport(op=entry.full_name, task_id=task_id, outcome="unchanged", version=existing.get("version"))
    version = int(existing.get("version", 0)) + 1 if existing is not None else 1
    try:
        document = task_document(entry, chosen, task_id, version, source, growth, mode)
    except ProblemError as error:
        return OpImport(op=entry.full_name, task_id=task_id, outcome="failed", reason="scaling", detail=str(error))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROBLEM_FILE).write_text(source, encoding="utf-8")
    document = calibrated_document(document, folder)
    (folder / "task.toml").write_text(tomli_w.dumps(without_none(document)), encoding="utf-8")
    return OpImport(op=entry.full_name, task_id=task_id, outcome="updated" if existing is not None else "new", version=version)


def select_entries(entries: Iterable[OpEntry], only: Iterable[str] | None = None) -> list[OpEntry]:
    """The entries named in `only` (OpInfo names, with or without ".variant"; all when None)."""
    entries = list(entries)
    if only is None:
        return entries
    wanted = set(only)
    chosen = [entry for entry in entries if entry.full_name in wanted or entry.name in wanted]
    unknown = wanted - {entry.full_name for entry in chosen} - {entry.name for entry in chosen}
    if unknown:
        raise ProblemError(f"not in this torch's OpInfo database: {', '.join(sorted(unknown))}")
    return chosen


def load_entries() -> list[OpEntry]:
    """The op database, or ProblemError saying how to install what it needs."""
    try:
        return load_op_db()
    except ImportError as error:
        raise ProblemError(f"PyTorch's OpInfo database needs {error.name or 'expecttest'}: pip install 'kernel-gym[opinfo]'") from None


def import_opinfo(out: Path, only: Iterable[str] | None = None, on_op: Callable[[OpImport], None] | None = None) -> OpInfoImportReport:
    """Import every OpInfo entry (or those in `only`) into the task root `out`."""
    entries = select_entries(load_entries(), only)
    report = OpInfoImportReport(torch_version=torch.__version__, out=str(out))
    for entry in entries:
        try:
            result = import_entry(entry, out)
        except Exception as error:  # noqa: BLE001 - one op's failure is reported, never the whole import's end
            result = OpImport(
                op=entry.full_name, task_id=task_id_of(entry), outcome="failed", reason="import_error", detail=f"{type(error).__name__}: {error}"[:500]
            )
        report.ops.append(result)
        if on_op is not None:
            on_op(result)
    return report
