"""`kgym import models`: what real models spend their time in, at their shapes, as three kinds of task.

Each architecture (gym.tasks.models.architectures) runs one forward on the meta device (and one
decode step with a KV cache for the LLMs, as `<model>_decode`), recorded as a dataflow graph
(gym.tasks.models.graph), with autograd on; the forward's loss is then differentiated on the meta
device too, for the cost of the model's backward pass. Every call is costed on a roofline
(gym.tasks.models.trace). From each trace:

- **forward** tasks `models/<model>/<op>_<rank>`: the costliest op groups, until they cover `COVER`
  of the modelled time or `MAX_PER_MODEL` tasks, each the aten call with the model's arguments;
- **fusion** tasks `models/l2/<model>/<pattern>_<rank>` (KernelBench level 2): the runs of
  consecutive ops real kernels fuse (gym.tasks.models.fusion: bias + activation after a matmul,
  residual add + norm, SwiGLU/GeGLU, rotary embedding, QK-norm, scaled/masked softmax, attention),
  a head matmul or convolution allowed in torch (`allowed_torch`), the rest required in Triton;
- **backward** tasks `models/backward/<model>/<pattern>_backward_<rank>` (prefill traces only): the
  backward of the same fusions and of the models' norms, activations, softmaxes and embeddings,
  graded against autograd's gradients.

Every problem is written from the graph (gym.tasks.models.render): its inputs are the tensors the
model holds, its forward replays the model's own views (a transposed weight stays transposed, and
the description says which op reads what strides), masks and positions are built as the model
builds them, and its sizes are symbolic so that scaling keeps the op's structure (a patchify
convolution's kernel stays its stride, a GQA attention's head ratio stays a ratio). The model's
shapes are the bench shape; scaled-down copies the public and hidden ones (the KernelBench
scaler). A task names every model that runs the same problem, with its share of that model's
modelled forward (or backward) time. An op that gives NaN on inputs in [-1, 1] (a batch norm's
running variance) gets inputs in [0.05, 1.05].

Re-importing is idempotent, as for the other importers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, Field

from gym.errors import ProblemError
from gym.tasks.contract_presets import calibrated_document, kind_contract
from gym.tasks.kernelbench.importer import PROBLEM_FILE, anchors_in, existing_document, parameter_names, scale_and_probe, shape_tables, without_none
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate, parse_problem
from gym.tasks.kernelbench.scaling import scale
from gym.tasks.metadata import problem_dispatch
from gym.tasks.models.architectures import ARCHITECTURES, Architecture
from gym.tasks.models.fusion import cut_of, pattern, regions
from gym.tasks.models.graph import Graph, Node, record_graph
from gym.tasks.models.render import Cut, Rendered, Unrenderable, render_cut, signature
from gym.tasks.models.trace import PROFILE_NAME, OpGroup, cost_of, groups_of
from gym.tasks.splits import op_sequence

# 2: problems written from the graph (the model's views and strides, symbolic sizes), fusion and backward tasks.
IMPORTER_VERSION = 2
SUITE = "models"
# Op groups imported per model: until they cover this share of its modelled time, at most this many.
COVER = 0.999
MAX_PER_MODEL = 40
# Fusion and backward tasks per traced model, costliest first.
MAX_FUSIONS = 40
MAX_BACKWARD = 40
# Single ops whose backward is a task of its own (norms, activations, softmax, embedding).
BACKWARD_OPS = frozenset(
    f"aten.{name}"
    for name in (
        "native_layer_norm",
        "native_group_norm",
        "native_batch_norm",
        "_native_batch_norm_legit_no_training",
        "_safe_softmax",
        "_softmax",
        "_log_softmax",
        "gelu",
        "silu",
        "relu",
        "tanh",
        "sigmoid",
        "embedding",
    )
)

Kind = Literal["forward", "fusion", "backward"]


class ModelOpImport(BaseModel):
    """What happened to one candidate (an op group, a fusion or a backward) of one model."""

    model: str = Field(description='The model (a decode step is "<model>_decode").')
    op: str = Field(description='The aten overload ("aten.mm.default"), or the fusion pattern ("fusion:swiglu", "backward:rms_norm").')
    kind: Kind = Field(default="forward", description="forward (one op), fusion (level 2) or backward.")
    share: float = Field(description="Its share of the model's modelled forward time (backward: of its backward time).")
    task_id: str | None = Field(default=None, description="The task it became, when it imported.")
    outcome: Literal["new", "updated", "unchanged", "excluded", "failed"] = Field(description="As for the other importers.")
    version: int | None = Field(default=None, description="The task version written or kept.")
    reason: str | None = Field(default=None, description="Why it was left out or failed.")


class ModelsImportReport(BaseModel):
    """The result of importing the architectures."""

    out: str = Field(description="The task root written into.")
    models: dict[str, float] = Field(default_factory=dict, description="Each traced model -> the share of its modelled time its forward tasks cover.")
    fusion: dict[str, float] = Field(default_factory=dict, description="Each traced model -> the share of its modelled forward time its fusion tasks cover.")
    backward: dict[str, float] = Field(
        default_factory=dict,
        description="Each prefill trace -> the share of its modelled backward time its fusion regions' backward tasks cover (the single ops' and "
        "the epilogues-with-their-matmul tasks overlap them and are not added).",
    )
    ops: list[ModelOpImport] = Field(default_factory=list, description="One entry per candidate considered, by model and kind, most costly first.")

    def count(self, outcome: str, kind: str | None = None) -> int:
        return sum(1 for op in self.ops if op.outcome == outcome and (kind is None or op.kind == kind))


@dataclass
class Traced:
    """One forward (or decode step) of one architecture."""

    model: str
    graph: Graph
    groups: list[OpGroup]
    seconds: float
    # The modelled time of the loss's backward (None for a decode step: inference only).
    backward_seconds: float | None = None


@dataclass
class _Candidate:
    kind: Kind
    model: str
    name: str
    op: str
    traced: Traced
    cut: Cut
    share: float = 0.0
    rendered: Rendered | None = None
    key: str = ""
    reason: str | None = None
    rank: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _loss(result: Any) -> torch.Tensor | None:
    """The first float output autograd reaches, summed (what a training step differentiates)."""
    values = list(result.values()) if hasattr(result, "values") and callable(result.values) else [result]
    for value in values:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.requires_grad:
            return value.sum()
    return None


def trace_architecture(architecture: Architecture, layers: int | None = None) -> list[Traced]:
    """The graphs of the model's forward (with its backward's modelled time) and of its decode step."""
    model, inputs = architecture.build(layers)
    graph, result = record_graph(model, lambda: model(**inputs), grad=True)
    loss = _loss(result)
    backward = cost_of(lambda: loss.backward()) if loss is not None else None
    traced = [Traced(architecture.name, graph, groups_of(graph), sum(node.seconds for node in graph.compute_nodes()), backward)]
    if architecture.decode:
        cache = getattr(result, "past_key_values", None)
        step = inputs["input_ids"][:, -1:]
        decode, _ = record_graph(model, lambda: model(input_ids=step, past_key_values=cache, use_cache=True), grad=False)
        traced.append(Traced(f"{architecture.name}_decode", decode, groups_of(decode), sum(node.seconds for node in decode.compute_nodes())))
    return traced


# --- candidates ------------------------------------------------------------------------------------


def _origin(kind: Kind, model: str, name: str, share: float) -> tuple[str, str]:
    """(module docstring, Model docstring) of a problem."""
    if kind == "forward":
        text = f"`{name}` at the shapes {model} runs it with ({share:.1%} of its modelled forward time on {PROFILE_NAME})"
    elif kind == "fusion":
        text = f"The {name} fusion as {model} runs it ({share:.1%} of its modelled forward time on {PROFILE_NAME})"
    else:
        text = f"The backward of {name} as {model} trains it ({share:.1%} of its modelled backward time on {PROFILE_NAME})"
    return text, text


def _render(candidate: _Candidate, positive: bool = False) -> Rendered:
    origin, doc = _origin(candidate.kind, candidate.model, candidate.name, candidate.share)
    return render_cut(candidate.traced.graph, candidate.cut, doc, origin, backward=candidate.kind == "backward", positive=positive)


def _identity(node: Node) -> bool:
    """`x * 1`, `x / 1`, `x + 0`, `x - 0`: the answer is the input."""
    if node.packet.rstrip("_") not in ("aten.mul", "aten.div", "aten.add", "aten.sub") or len(node.inputs()) != 1 or len(node.args) < 2:
        return False
    scalar = node.args[1]
    if isinstance(scalar, bool) or not isinstance(scalar, (int, float)):
        return False
    return scalar == (1 if node.packet.rstrip("_") in ("aten.mul", "aten.div") else 0) and node.kwargs.get("alpha", 1) == 1


def forward_candidates(traced: Traced) -> list[_Candidate]:
    found = []
    graph = traced.graph
    for rank, group in enumerate(traced.groups, start=1):
        node = graph.nodes[group.nodes[0]]
        cut = Cut(nodes=[node.index], outputs=list(node.outputs), split_bias=False)
        candidate = _Candidate("forward", traced.model, group.op, group.op, traced, cut, share=group.share, rank=rank)
        if any(graph.values[value].numel == 0 for value in node.inputs()):
            candidate.reason = "reads an empty tensor (a KV cache's first append: a copy)"
        elif _identity(node):
            candidate.reason = "an identity (the answer is its input)"
        found.append(candidate)
    return found


def _aggregate(candidates: list[_Candidate], seconds: dict[str, float], total: float) -> list[_Candidate]:
    """One candidate per distinct problem (the first occurrence), its share summed over occurrences, costliest first."""
    kept: dict[str, _Candidate] = {}
    for candidate in candidates:
        if candidate.key not in kept:
            kept[candidate.key] = candidate
    ordered = sorted(kept.values(), key=lambda candidate: -seconds[candidate.key])
    for rank, candidate in enumerate(ordered, start=1):
        candidate.share = seconds[candidate.key] / (total or 1.0)
        candidate.rank = rank
    return ordered


def _rendered(kind: Kind, traced: Traced, cuts: list[tuple[str, Cut]]) -> tuple[list[_Candidate], list[_Candidate]]:
    """Each named cut rendered (keyed by its problem), and those that cannot be problems."""
    found: list[_Candidate] = []
    failed: list[_Candidate] = []
    for name, cut in cuts:
        candidate = _Candidate(kind, traced.model, name, f"{kind}:{name}", traced, cut)
        try:
            candidate.rendered = _render(candidate)
        except Unrenderable as error:
            candidate.reason = str(error)
            failed.append(candidate)
            continue
        candidate.key = signature(candidate.rendered)
        found.append(candidate)
    return found, _unique_failures(failed)


def fusion_candidates(traced: Traced) -> tuple[list[_Candidate], list[_Candidate]]:
    """The traced model's distinct fusions (costliest first), and those that cannot be problems."""
    graph = traced.graph
    cuts: list[tuple[str, Cut]] = []
    for region in regions(graph):
        cut = cut_of(graph, region)
        if cut is not None:
            cuts.append((pattern(graph, cut, region.sdpa), cut))
    found, failed = _rendered("fusion", traced, cuts)
    seconds: dict[str, float] = {}
    for candidate in found:
        seconds[candidate.key] = seconds.get(candidate.key, 0.0) + sum(graph.nodes[index].seconds for index in candidate.cut.nodes)
    return _aggregate(found, seconds, traced.seconds), failed


def _unique_failures(failed: list[_Candidate]) -> list[_Candidate]:
    seen: set[tuple[str, str | None]] = set()
    kept = []
    for candidate in failed:
        if (candidate.name, candidate.reason) not in seen:
            seen.add((candidate.name, candidate.reason))
            kept.append(candidate)
    return kept


def _meta_seconds(source: str, label: str) -> float:
    """The modelled time of a problem's forward at its own sizes, run on the meta device."""
    module = instantiate(source, {}, label)
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
        return cost_of(lambda: model(*inputs), grad=True)


def backward_candidates(traced: Traced) -> tuple[list[_Candidate], list[_Candidate]]:
    """The distinct backward problems of a prefill trace (costliest first), and those that cannot be problems."""
    graph = traced.graph
    cuts: list[tuple[str, Cut]] = []
    for region in regions(graph):
        cut = cut_of(graph, region, with_head=False)
        if cut is not None:
            cuts.append((pattern(graph, cut, region.sdpa), cut))
        # An epilogue's backward with its matmul or convolution too (the anchor's own backward may stay in torch).
        headed = cut_of(graph, region) if region.sdpa is None else None
        if headed is not None and headed.anchors and (cut is None or headed.nodes != cut.nodes):
            headed.disjoint = False
            cuts.append((pattern(graph, headed), headed))
    for node in graph.compute_nodes():
        if node.packet in BACKWARD_OPS and any(graph.values[value].requires_grad for value in node.outputs):
            cuts.append((node.packet.removeprefix("aten.").strip("_"), Cut(nodes=[node.index], outputs=list(node.outputs), split_bias=False, disjoint=False)))
    found, failed = _rendered("backward", traced, cuts)
    counts: dict[str, int] = {}
    for candidate in found:
        counts[candidate.key] = counts.get(candidate.key, 0) + 1
    seconds: dict[str, float] = {}
    firsts: dict[str, _Candidate] = {}
    for candidate in found:
        firsts.setdefault(candidate.key, candidate)
    for key, candidate in firsts.items():
        assert candidate.rendered is not None
        label = f"{traced.model} backward {candidate.name}"
        try:
            forward = render_cut(graph, candidate.cut, "", "")
            seconds[key] = counts[key] * max(0.0, _meta_seconds(candidate.rendered.source, label) - _meta_seconds(forward.source, label))
        except Exception as error:  # noqa: BLE001 - a problem the meta device cannot run is reported, not fatal
            candidate.reason = f"{type(error).__name__}: {str(error)[:300]}"
            seconds[key] = 0.0
    return _aggregate(found, seconds, traced.backward_seconds or 1.0), failed


# --- documents -------------------------------------------------------------------------------------


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


def _dispatch(source: str, public: dict[str, int], label: str) -> dict[str, Any]:
    """What the problem dispatches at its public shape, its op kind and the contract that kind calls for
    (gym.tasks.metadata.problem_dispatch, gym.tasks.contract_presets.kind_contract)."""
    dispatch = problem_dispatch(source, public, label)
    return {
        "contract": kind_contract(dispatch.kind, dispatch.output_kind, dispatch.selected),
        "fields": {"op_kind": dispatch.kind, "output_kind": dispatch.output_kind, "aten_ops": len(op_sequence(dispatch.ops)), "dispatched": list(dispatch.ops)},
    }


def _users_text(used_by: dict[str, float]) -> str:
    return ", ".join(f"{model} ({share:.1%})" for model, share in sorted(used_by.items(), key=lambda item: -item[1]))


def _layout_text(rendered: Rendered) -> str:
    if not rendered.layout:
        return "Every input is contiguous, and the ops read them as the model passes them."
    return (
        "The inputs are the tensors the model holds, contiguous as it holds them; the reference applies the model's own views "
        "(transposes, slices, reshapes) before its ops, so they read strided tensors exactly as the model passes them: " + "; ".join(rendered.layout) + "."
    )


def _ops_text(rendered: Rendered) -> str:
    names = [op.removeprefix("aten.") for op in rendered.ops]
    return " -> ".join(names)


def task_document(task_id: str, version: int, source: str, candidate: _Candidate, used_by: dict[str, float]) -> dict[str, Any]:
    assert candidate.rendered is not None
    rendered = candidate.rendered
    problem = parse_problem(source)
    scaled, probe = scale_and_probe(problem, task_id)
    forward = problem.forward_params[: probe.input_count]
    params, state = parameter_names(forward, probe.state_keys)
    users = _users_text(used_by)
    layout = _layout_text(rendered)
    anchors = anchors_in(probe.ops) if candidate.kind != "forward" and candidate.cut.anchors else []
    policy = (
        "All of the computation must run in your Triton kernels (torch for allocation, views and launch plumbing only)."
        if not anchors
        else f"The {', '.join(sorted({op for op in anchors if op in probe.ops}))} call(s) may stay in torch, made exactly as the reference makes them; "
        "every other op must run in your Triton kernels, and at least one must launch."
    )
    scaled_text = "Sizes here are scaled for grading; the problem's own sizes are the benchmark shape."
    if candidate.kind == "forward":
        title = f"{candidate.name} from {', '.join(sorted(used_by))}"
        description = (
            f"An op real models spend their time in: implement Model.forward of the problem file below, which calls torch.ops.{candidate.name}. "
            f"At the benchmark shape it is exactly the call these models make, with their share of the model's modelled forward time "
            f"({PROFILE_NAME}): {users}. {layout} {policy} {scaled_text}"
        )
        level = 1
    elif candidate.kind == "fusion":
        title = f"{candidate.name} fusion from {', '.join(sorted(used_by))}"
        description = (
            f"A fusion real models run: implement Model.forward of the problem file below, the consecutive ops {_ops_text(rendered)} "
            f"({candidate.name.replace('_', ' ')}), exactly as these models run them, with their share of each model's modelled forward time "
            f"({PROFILE_NAME}): {users}. {layout} {policy} {scaled_text}"
        )
        level = 2
    else:
        grads = ", ".join(rendered.grads)
        title = f"{candidate.name} backward from {', '.join(sorted(used_by))}"
        description = (
            f"A backward pass real models train through: implement Model.forward of the problem file below, which takes the gradient of "
            f"the forward's output(s) ({grads}) and the forward's inputs, runs the forward ({_ops_text(rendered)}) with autograd on and returns "
            f"autograd's gradients with respect to {', '.join(rendered.wrt)}, in that order. Recompute what the forward would have saved "
            f"(or not) as you like; only the gradients are graded. Their share of each model's modelled backward time ({PROFILE_NAME}): "
            f"{users}. {layout} {policy} {scaled_text}"
        )
        level = 2
    shapes, cost = shape_tables(source, scaled, task_id)
    dispatched = _dispatch(source, scaled.public, task_id)
    notes = [*scaled.notes]
    if rendered.layout:
        notes.insert(0, "the model's layouts: " + "; ".join(rendered.layout))
    return {
        "id": task_id,
        "version": version,
        "title": title,
        "description": description,
        "params": params,
        "dtypes": ["float32"],
        "min_bytes": "0",
        "min_flops": "0",
        "timeout_s": 300.0,
        "allowed_torch": anchors,
        "shapes": shapes,
        "contract": dispatched["contract"],
        "kernelbench": {
            "level": level,
            "problem_file": PROBLEM_FILE,
            "source_path": f"models/{candidate.kind}/{candidate.name}",
            "checkout": f"transformers model configs ({', '.join(sorted(used_by))})",
            "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "importer_version": IMPORTER_VERSION,
            "forward_inputs": params[: len(forward)],
            "state": state,
            "anchors": sorted({op for op in anchors if op in probe.ops}),
            "cost": cost,
            "scaling": "; ".join(notes),
            "models": {model: round(share, 6) for model, share in used_by.items()},
            **dispatched["fields"],
        },
    }


def _write(task_id: str, source: str, candidate: _Candidate, used_by: dict[str, float], out: Path) -> tuple[str, int]:
    import tomli_w

    folder = out / task_id
    sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest()
    existing = existing_document(folder)
    origin = (existing or {}).get("kernelbench", {})
    rounded = {model: round(share, 6) for model, share in used_by.items()}
    if existing is not None and origin.get("sha256") == sha256 and origin.get("importer_version") == IMPORTER_VERSION and origin.get("models") == rounded:
        return "unchanged", int(existing.get("version", 1))
    version = int(existing.get("version", 0)) + 1 if existing is not None else 1
    document = task_document(task_id, version, source, candidate, used_by)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROBLEM_FILE).write_text(source, encoding="utf-8")
    document = calibrated_document(document, folder)
    (folder / "task.toml").write_text(tomli_w.dumps(without_none(document)), encoding="utf-8")
    return ("updated" if existing is not None else "new"), version


def _slug(name: str) -> str:
    return name.split(".")[1].strip("_") if name.startswith("aten.") else name


def task_id_of(candidate: _Candidate) -> str:
    if candidate.kind == "forward":
        return f"{SUITE}/{candidate.model}/{_slug(candidate.name)}_{candidate.rank}"
    if candidate.kind == "fusion":
        return f"{SUITE}/l2/{candidate.model}/{candidate.name}_{candidate.rank}"
    return f"{SUITE}/backward/{candidate.model}/{candidate.name}_backward_{candidate.rank}"


# --- the import ------------------------------------------------------------------------------------


def import_models(
    out: Path,
    names: Iterable[str] | None = None,
    layers: int | None = None,
    on_op: Callable[[ModelOpImport], None] | None = None,
    kinds: Iterable[Kind] = ("forward", "fusion", "backward"),
    select: Callable[[str, str, str], bool] | None = None,
) -> ModelsImportReport:
    """Trace each architecture (all, or `names`) and import its costliest op groups, its fusions and
    its backward passes (`kinds`) into `out`; `select(kind, model, name)`, when given, picks which
    candidates are written (the others are left out of the report: a test imports a few)."""
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise ProblemError("kgym import models needs transformers: pip install 'kernel-gym[models]'") from None
    wanted = list(names) if names is not None else list(ARCHITECTURES)
    unknown = [name for name in wanted if name not in ARCHITECTURES]
    if unknown:
        raise ProblemError(f"unknown architectures: {', '.join(unknown)} (known: {', '.join(ARCHITECTURES)})")
    kinds = tuple(kinds)
    report = ModelsImportReport(out=str(out))

    def emit(entry: ModelOpImport) -> None:
        report.ops.append(entry)
        if on_op is not None:
            on_op(entry)

    traces: list[Traced] = []
    for name in wanted:
        try:
            traces += trace_architecture(ARCHITECTURES[name], layers)
        except Exception as error:  # noqa: BLE001 - one model's failure is reported, the others still import
            emit(ModelOpImport(model=name, op="(forward)", share=1.0, outcome="failed", reason=f"{type(error).__name__}: {str(error)[:300]}"))
    per_model: dict[str, dict[Kind, list[_Candidate]]] = {}
    for traced in traces:
        lists: dict[Kind, list[_Candidate]] = {}
        if "forward" in kinds:
            lists["forward"] = forward_candidates(traced)
        if "fusion" in kinds:
            lists["fusion"], failed = fusion_candidates(traced)
            for candidate in failed:
                emit(ModelOpImport(model=traced.model, op=candidate.op, kind="fusion", share=0.0, outcome="excluded", reason=candidate.reason))
        if "backward" in kinds and traced.backward_seconds is not None:
            lists["backward"], failed = backward_candidates(traced)
            for candidate in failed:
                emit(ModelOpImport(model=traced.model, op=candidate.op, kind="backward", share=0.0, outcome="excluded", reason=candidate.reason))
        per_model[traced.model] = lists
    # Forward candidates are rendered lazily (most are never imported): render the ones that could be.
    for lists in per_model.values():
        for candidate in lists.get("forward", []):
            if candidate.reason is not None:
                continue
            try:
                candidate.rendered = _render(candidate)
                candidate.key = signature(candidate.rendered)
            except Unrenderable as error:
                candidate.reason = str(error)
            except Exception as error:  # noqa: BLE001 - reported per op
                candidate.reason = f"{type(error).__name__}: {str(error)[:400]}"
    users: dict[tuple[str, str], dict[str, float]] = {}
    for model, lists in per_model.items():
        for kind, candidates in lists.items():
            for candidate in candidates:
                if candidate.key:
                    entry = users.setdefault((kind, candidate.key), {})
                    entry[model] = entry.get(model, 0.0) + candidate.share
    seen: dict[tuple[str, str], str] = {}
    for model, lists in per_model.items():
        for kind, candidates in lists.items():
            if select is not None:
                candidates = [candidate for candidate in candidates if select(kind, model, candidate.name)]
            covered = _import_kind(kind, model, candidates, users, seen, out, emit)
            {"forward": report.models, "fusion": report.fusion, "backward": report.backward}[kind][model] = round(covered, 4)
    return report


def _import_kind(
    kind: Kind,
    model: str,
    candidates: list[_Candidate],
    users: dict[tuple[str, str], dict[str, float]],
    seen: dict[tuple[str, str], str],
    out: Path,
    emit: Callable[[ModelOpImport], None],
) -> float:
    covered, imported = 0.0, 0
    limit = {"forward": MAX_PER_MODEL, "fusion": MAX_FUSIONS, "backward": MAX_BACKWARD}[kind]
    for candidate in candidates:
        if imported >= limit or (kind == "forward" and covered >= COVER):
            break
        entry = ModelOpImport(model=model, op=candidate.op, kind=kind, share=round(candidate.share, 6), outcome="failed")
        try:
            if candidate.rendered is None or not candidate.key:
                entry.outcome, entry.reason = "excluded", candidate.reason or "not renderable"
                continue
            if candidate.reason is not None:
                entry.reason = candidate.reason
                continue
            if (kind, candidate.key) in seen:
                entry.task_id, entry.outcome, entry.reason = seen[(kind, candidate.key)], "excluded", "the same problem as an earlier model's task"
                covered += candidate.share if candidate.cut.disjoint else 0.0
                continue
            task_id = task_id_of(candidate)
            # Rendered again now that its share is known (the docstrings name it; the problem is the same).
            candidate.rendered = _render(candidate)
            source = candidate.rendered.source
            if _makes_nan(source, task_id):
                candidate.rendered = _render(candidate, positive=True)
                source = candidate.rendered.source
            entry.task_id = task_id
            entry.outcome, entry.version = _write(task_id, source, candidate, users[(kind, candidate.key)], out)  # type: ignore[assignment]
            seen[(kind, candidate.key)] = task_id
            covered += candidate.share if candidate.cut.disjoint else 0.0
            imported += 1
        except Unrenderable as skip:
            entry.outcome, entry.reason = "excluded", str(skip)
        except ProblemError as error:
            entry.outcome, entry.reason = "failed", str(error)[:500]
        except Exception as error:  # noqa: BLE001 - reported per candidate
            entry.outcome, entry.reason = "failed", f"{type(error).__name__}: {str(error)[:400]}"
        finally:
            emit(entry)
    return covered
