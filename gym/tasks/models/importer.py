"""`kgym import models`: the ops real models spend their time in, at their shapes, as tasks
`models/<model>/<op>_<rank>`.

Each architecture (gym.tasks.models.architectures) runs one forward on the meta device (and
one decode step with a KV cache for the LLMs, as `<model>_decode`) under a recorder
(gym.tasks.models.trace). Its op groups, most costly first, become tasks until they cover
`COVER` of the forward's modelled time or `MAX_PER_MODEL` tasks: each a KernelBench-format
problem calling the aten overload with the recorded arguments (gym.tasks.opinfo.problem_source),
the real shapes its bench shape and scaled-down copies its public and hidden ones (the
KernelBench scaler). A task records every model that runs the same op at the same shapes, with
its share of that model's time. Float inputs are drawn uniform in [-1, 1]; an embedding's indices
below its table's rows; other integer tensors (positions, routing) make the group left out.

Re-importing is idempotent, as for the other importers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, Field
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

from gym.errors import KernelGymError, ProblemError
from gym.tasks.kernelbench.importer import PROBLEM_FILE, existing_document, parameter_names, scale_and_probe, shape_tables, without_none
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate, parse_problem
from gym.tasks.kernelbench.scaling import scale
from gym.tasks.models.architectures import ARCHITECTURES, Architecture
from gym.tasks.models.trace import PROFILE_NAME, OpGroup, TensorSpec, trace
from gym.tasks.opinfo.importer import contract_for, kind_of
from gym.tasks.opinfo.problem_source import render
from gym.tasks.opinfo.samples import RANDOM_OPS, OpEntry, SampleCase, TensorInput, literal_ok

IMPORTER_VERSION = 1
SUITE = "models"
# Op groups imported per model: until they cover this share of its modelled time, at most this many.
COVER = 0.999
MAX_PER_MODEL = 40
_MATMUL_LIKE = frozenset(packet.__name__ for packet in flop_registry)
_NAMES = ("x", "y", "z", "w", "u", "v")


class ModelOpImport(BaseModel):
    """What happened to one op group of one model."""

    model: str = Field(description='The model (a decode step is "<model>_decode").')
    op: str = Field(description='The aten overload, e.g. "aten.mm.default".')
    share: float = Field(description="Its share of the model's modelled forward time.")
    task_id: str | None = Field(default=None, description="The task it became, when it imported.")
    outcome: Literal["new", "updated", "unchanged", "excluded", "failed"] = Field(description="As for the other importers.")
    version: int | None = Field(default=None, description="The task version written or kept.")
    reason: str | None = Field(default=None, description="Why it was left out or failed.")


class ModelsImportReport(BaseModel):
    """The result of importing the architectures."""

    out: str = Field(description="The task root written into.")
    models: dict[str, float] = Field(default_factory=dict, description="Each traced model -> the share of its modelled time its imported tasks cover.")
    ops: list[ModelOpImport] = Field(default_factory=list, description="One entry per op group considered, by model, most costly first.")

    def count(self, outcome: str) -> int:
        return sum(1 for op in self.ops if op.outcome == outcome)


class _Skip(KernelGymError):
    """An op group that cannot be a kernel task; the message says why (reported, never raised out)."""


@dataclass
class _Candidate:
    model: str
    rank: int
    group: OpGroup


def _signature(group: OpGroup) -> str:
    return hashlib.sha256(repr((group.op, group.args, sorted(group.kwargs.items()))).encode()).hexdigest()


def _slot(value: Any, param: str, tensors: list[TensorInput], index_bound: int | None) -> Any:
    if isinstance(value, TensorSpec):
        if value.dtype.is_floating_point:
            tensor = TensorInput(param=param, shape=value.shape, dtype=value.dtype, low=-1.0, high=1.0)
        elif value.dtype == torch.bool:
            tensor = TensorInput(param=param, shape=value.shape, dtype=value.dtype, low=0.5, high=0.5)
        elif index_bound is not None:
            tensor = TensorInput(param=param, shape=value.shape, dtype=value.dtype, low=0, high=index_bound - 1, bounded=True)
        else:
            raise _Skip(f"{param} is an integer tensor whose values the trace cannot know (positions, routing)")
        tensors.append(tensor)
        return tensor
    if isinstance(value, (list, tuple)) and any(isinstance(item, TensorSpec) for item in value):
        # x[indices] (aten.index): the first index tensor is below the indexed tensor's first dimension.
        items = [_slot(item, f"{param}{i}", tensors, index_bound if i == 0 else None) for i, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, torch.device):
        raise _Skip("takes a device argument (a factory)")
    if not literal_ok(value):
        raise _Skip(f"{param} is a {type(value).__name__}")
    return value


def sample_case(group: OpGroup, model: str, share: float) -> SampleCase:
    """The op group as a problem to render (_Skip when it cannot be a kernel task)."""
    packet = group.op.split(".")[1]
    name = f"aten.{packet}"
    if name in RANDOM_OPS:
        raise _Skip("random")
    if packet.endswith("_"):
        # An in-place op (a residual add_) computes what its out-of-place twin does: that is the task.
        twin = getattr(torch.ops.aten, packet.rstrip("_"), None)
        overload = group.op.split(".")[2]
        if twin is None or not hasattr(twin, overload):
            raise _Skip("in place (writes its input), with no out-of-place twin")
        packet = packet.rstrip("_")
        name = f"aten.{packet}"
        group = OpGroup(op=f"aten.{packet}.{overload}", args=group.args, kwargs=group.kwargs, outputs=group.outputs, flops=group.flops)
    tensors: list[TensorInput] = []
    # An embedding's indices are below the table's rows; an index's below the indexed tensor's first dimension.
    bound = group.args[0].shape[0] if packet in ("embedding", "index") and isinstance(group.args[0], TensorSpec) and group.args[0].shape else None
    args = [_slot(value, _NAMES[i] if i < len(_NAMES) else f"arg{i}", tensors, bound if i == 1 else None) for i, value in enumerate(group.args)]
    kwargs = {key: _slot(value, key, tensors, None) for key, value in group.kwargs.items()}
    if not tensors:
        raise _Skip("no tensor input (a factory)")
    if not group.outputs:
        raise _Skip("the output is not a tensor")
    kinds = {"bool" if t.dtype == torch.bool else ("float" if t.dtype.is_floating_point else "int") for t in group.outputs}
    largest = max(t.bytes // t.dtype.itemsize for t in tensors_of(group))
    case = SampleCase(
        entry=OpEntry(name=name, variant="", info=None),
        index=0,
        callee=f"torch.ops.{group.op}",
        args=args,
        kwargs=kwargs,
        tensors=tensors,
        compute_op=name,
        ops={name: 1},
        output_kind="+".join(sorted(kinds)),
        selected=False,
        reduces=sum(t.bytes // t.dtype.itemsize for t in group.outputs) < largest,
        flops=group.flops if packet in _MATMUL_LIKE else 0,
        docstring=f"{group.op} as {model} runs it ({share:.1%} of its modelled forward time on {PROFILE_NAME})",
        origin=f"`{group.op}` at the shapes {model} runs it with ({share:.1%} of its modelled forward time on {PROFILE_NAME})",
    )
    return case


def _makes_nan(source: str, label: str) -> bool:
    """Whether the problem's outputs hold NaN at its scaled public shape (a variance or an rsqrt's
    input drawn negative): its float inputs are then drawn positive."""
    problem = parse_problem(source)
    public = scale(problem, label).public
    module = instantiate(source, public, label)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(0)
        result = module.Model(*init_inputs(module))(*forward_inputs(module))
    outputs = [result] if isinstance(result, torch.Tensor) else [item for item in result if isinstance(item, torch.Tensor)]
    return any(t.is_floating_point() and bool(torch.isnan(t).any()) for t in outputs)


def positive(case: SampleCase) -> SampleCase:
    """The case with every float input drawn in [0.05, 1.05]."""
    for tensor in case.tensors:
        if tensor.dtype.is_floating_point:
            tensor.low, tensor.high = 0.05, 1.05
    case.notes.append("float inputs drawn in [0.05, 1.05] (in [-1, 1] the op gives NaN)")
    return case


def tensors_of(group: OpGroup) -> list[TensorSpec]:
    """The group's tensor arguments, in order."""
    return [leaf for leaf in tree_leaves([group.args, group.kwargs]) if isinstance(leaf, TensorSpec)]


def trace_architecture(architecture: Architecture, layers: int | None = None) -> dict[str, list[OpGroup]]:
    """The op groups of the model's forward (and of its decode step), most costly first."""
    model, inputs = architecture.build(layers)
    groups, result = trace(lambda: model(**inputs))
    traced = {architecture.name: groups}
    if architecture.decode:
        cache = getattr(result, "past_key_values", None)
        step = inputs["input_ids"][:, -1:]
        decode, _ = trace(lambda: model(input_ids=step, past_key_values=cache, use_cache=True))
        traced[f"{architecture.name}_decode"] = decode
    return traced


def _task_id(model: str, group: OpGroup, rank: int) -> str:
    return f"{SUITE}/{model}/{group.op.split('.')[1].strip('_')}_{rank}"


def task_document(task_id: str, version: int, source: str, case: SampleCase, group: OpGroup, used_by: dict[str, float]) -> dict[str, Any]:
    problem = parse_problem(source)
    scaled, probe = scale_and_probe(problem, task_id)
    forward = problem.forward_params[: probe.input_count]
    params, state = parameter_names(forward, probe.state_keys)
    users = ", ".join(f"{model} ({share:.1%})" for model, share in sorted(used_by.items(), key=lambda item: -item[1]))
    description = (
        f"An op real models spend their time in: implement Model.forward of the problem file below, which calls {case.callee}. "
        f"At the benchmark shape it is exactly the call these models make, with their share of the model's modelled forward time "
        f"({PROFILE_NAME}): {users}. All of the computation must run in your Triton kernels (torch for allocation, views and "
        "launch plumbing only). Sizes here are scaled for grading; the problem's own sizes are the benchmark shape."
    )
    shapes, cost = shape_tables(source, scaled, task_id)
    strides = "; ".join(f"{t.shape} stride {t.stride}" for t in tensors_of(group))
    return {
        "id": task_id,
        "version": version,
        "title": f"{group.op} from {', '.join(sorted(used_by))}",
        "description": description,
        "params": params,
        "dtypes": ["float32"],
        "min_bytes": "0",
        "min_flops": "0",
        "timeout_s": 300.0,
        "shapes": shapes,
        "contract": contract_for(case),
        "kernelbench": {
            "level": 1,
            "problem_file": PROBLEM_FILE,
            "source_path": f"models/{group.op}",
            "checkout": f"transformers model configs ({', '.join(sorted(used_by))})",
            "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "importer_version": IMPORTER_VERSION,
            "forward_inputs": params[: len(forward)],
            "state": state,
            "cost": cost,
            "scaling": f"the models' tensors: {strides} (inputs are given contiguous); " + "; ".join([*case.notes, *scaled.notes]),
            "op_kind": kind_of(case),
            "output_kind": case.output_kind,
            "aten_ops": 1,
            "models": {model: round(share, 6) for model, share in used_by.items()},
        },
    }


def _write(task_id: str, source: str, case: SampleCase, group: OpGroup, used_by: dict[str, float], out: Path) -> tuple[str, int]:
    import tomli_w

    folder = out / task_id
    sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest()
    existing = existing_document(folder)
    origin = (existing or {}).get("kernelbench", {})
    rounded = {model: round(share, 6) for model, share in used_by.items()}
    if existing is not None and origin.get("sha256") == sha256 and origin.get("importer_version") == IMPORTER_VERSION and origin.get("models") == rounded:
        return "unchanged", int(existing.get("version", 1))
    version = int(existing.get("version", 0)) + 1 if existing is not None else 1
    document = task_document(task_id, version, source, case, group, used_by)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROBLEM_FILE).write_text(source, encoding="utf-8")
    (folder / "task.toml").write_text(tomli_w.dumps(without_none(document)), encoding="utf-8")
    return ("updated" if existing is not None else "new"), version


def import_models(
    out: Path,
    names: Iterable[str] | None = None,
    layers: int | None = None,
    on_op: Callable[[ModelOpImport], None] | None = None,
) -> ModelsImportReport:
    """Trace each architecture (all, or `names`) and import its costliest op groups into `out`."""
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise ProblemError("kgym import models needs transformers: pip install 'kernel-gym[models]'") from None
    wanted = list(names) if names is not None else list(ARCHITECTURES)
    unknown = [name for name in wanted if name not in ARCHITECTURES]
    if unknown:
        raise ProblemError(f"unknown architectures: {', '.join(unknown)} (known: {', '.join(ARCHITECTURES)})")
    traced: dict[str, list[OpGroup]] = {}
    for name in wanted:
        try:
            traced.update(trace_architecture(ARCHITECTURES[name], layers))
        except Exception as error:  # noqa: BLE001 - one model's failure is reported, the others still import
            report_failure = ModelOpImport(model=name, op="(forward)", share=1.0, outcome="failed", reason=f"{type(error).__name__}: {str(error)[:300]}")
            if on_op is not None:
                on_op(report_failure)
            traced[name] = []
    # Which models run each (op, arguments), with its share there.
    users: dict[str, dict[str, float]] = {}
    for model, groups in traced.items():
        for group in groups:
            users.setdefault(_signature(group), {})[model] = group.share
    report = ModelsImportReport(out=str(out))
    seen: dict[str, str] = {}
    for model, groups in traced.items():
        covered, imported = 0.0, 0
        for rank, group in enumerate(groups, start=1):
            if covered >= COVER or imported >= MAX_PER_MODEL:
                break
            entry = ModelOpImport(model=model, op=group.op, share=round(group.share, 6), outcome="failed")
            signature = _signature(group)
            try:
                if signature in seen:
                    # The same call as a task already written for another model: that task names this one too.
                    entry.task_id, entry.outcome, entry.reason = seen[signature], "excluded", "the same op and shapes as an earlier model's task"
                    covered += group.share
                    continue
                case = sample_case(group, model, group.share)
                source = render(case, torch.__version__)
                if _makes_nan(source, _task_id(model, group, rank)):
                    source = render(positive(case), torch.__version__)
                task_id = _task_id(model, group, rank)
                entry.task_id = task_id
                entry.outcome, entry.version = _write(task_id, source, case, group, users[signature], out)  # type: ignore[assignment]
                seen[signature] = task_id
                covered += group.share
                imported += 1
            except _Skip as skip:
                entry.outcome, entry.reason = "excluded", str(skip)
            except ProblemError as error:
                entry.outcome, entry.reason = "failed", str(error)[:500]
            except Exception as error:  # noqa: BLE001 - reported per op
                entry.outcome, entry.reason = "failed", f"{type(error).__name__}: {str(error)[:400]}"
            finally:
                report.ops.append(entry)
                if on_op is not None:
                    on_op(entry)
        report.models[model] = round(covered, 4)
    return report
