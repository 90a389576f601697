"""`kgym import kernelbench PATH`: a KernelBench checkout's problems as task folders.

Each problem `KernelBench/level1/19_ReLU.py` becomes `kb/l1/19_relu/` in a task
root (the user root by default, never the repository): `task.toml` plus
`problem.py`, the problem's source copied verbatim, with its checkout path,
commit and sha256 recorded. The task's kernel parameters are Model.forward's
inputs followed by the Model's state_dict (dots become underscores); its shapes
come from `scaling`; levels 2-3 may leave the anchor ops their reference runs
(convolutions, the matmul family, pooling, recurrent layers) to torch.

Each task records what its reference dispatches at the public shape (`dispatched`, with the
op kind read from it: gym.tasks.metadata), for its metadata and its split family.

Re-importing is idempotent: a task whose source and importer are unchanged is
left alone (its check-tasks verdict included); a changed one gets version + 1.
"""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, Field

from gym.errors import ProblemError
from gym.tasks.contract_presets import ORACLE_FACTOR, ORACLE_RELATIVE_FLOOR, SANITY_TOLERANCE
from gym.tasks.kernelbench.problem import ProblemFile, forward_inputs, init_inputs, instantiate, parse_problem
from gym.tasks.kernelbench.scaling import PUBLIC_BUDGET, Scaled, footprint, scale, tensors_in
from gym.tasks.metadata import problem_dispatch
from gym.tasks.model import ShapeSets, hidden_shape_problems, without_none
from gym.tasks.splits import op_sequence
from gym.worker.op_trace import OpTrace

# Bumped whenever the importer would write a different task for the same problem (scaling, contract, mapping).
IMPORTER_VERSION = 4
LEVELS = (1, 2, 3)
PROBLEM_FILE = "problem.py"

# aten packets of the ops levels 2-3 may leave to torch, by family: a reference that runs one
# op of a family allows the whole family (CPU and GPU builds dispatch different members).
ANCHOR_FAMILIES: dict[str, tuple[str, ...]] = {
    "convolution": ("convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose", "mkldnn_convolution", "convolution_overrideable"),
    "matmul": ("mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "_addmm_activation"),
    "pooling": (
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "max_pool2d_with_indices",
        "max_pool3d_with_indices",
        "avg_pool2d",
        "avg_pool3d",
        "adaptive_max_pool2d",
        "adaptive_max_pool3d",
        "_adaptive_avg_pool2d",
        "_adaptive_avg_pool3d",
    ),
    "recurrent": ("mkldnn_rnn_layer", "_cudnn_rnn", "miopen_rnn", "lstm", "gru", "rnn_tanh", "rnn_relu", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell"),
}

# The precision-fair default contract (README, "KernelBench: contracts"): error against the float64
# oracle at most ORACLE_FACTOR x the float32 reference's own + ORACLE_RELATIVE_FLOOR x the output's
# largest magnitude; a loose allclose as a sanity bound (SANITY_TOLERANCE); nontrivial. The
# constants live with the other importers' contracts (gym.tasks.contract_presets).


class ProblemImport(BaseModel):
    """What happened to one problem file."""

    source_path: str = Field(description="The problem's path inside the checkout.")
    task_id: str | None = Field(default=None, description="The task it became, when it imported.")
    outcome: Literal["new", "updated", "unchanged", "failed"] = Field(description="new / updated (version bumped) / unchanged / failed.")
    version: int | None = Field(default=None, description="The task version written or kept.")
    reason: str | None = Field(default=None, description="Why it failed to import.")


class ImportReport(BaseModel):
    """The result of importing a checkout."""

    checkout: str = Field(description="The KernelBench checkout read.")
    commit: str | None = Field(description="Its git commit, when it is a git checkout.")
    out: str = Field(description="The task root written into.")
    problems: list[ProblemImport] = Field(default_factory=list, description="One entry per problem file, in level and number order.")

    def count(self, outcome: str) -> int:
        return sum(1 for problem in self.problems if problem.outcome == outcome)


def slug(text: str) -> str:
    """A task-id part: lower case, runs of anything else than letters and digits as one '_'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "problem"


def level_folder(checkout: Path, level: int) -> Path | None:
    for candidate in (checkout / "KernelBench" / f"level{level}", checkout / f"level{level}"):
        if candidate.is_dir():
            return candidate
    return None


def _number(path: Path) -> tuple[int, str]:
    match = re.match(r"(\d+)", path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def find_problems(checkout: Path, levels: tuple[int, ...] = LEVELS) -> list[tuple[int, Path]]:
    found = []
    for level in levels:
        folder = level_folder(checkout, level)
        if folder is not None:
            found += [(level, path) for path in sorted(folder.glob("*.py"), key=_number) if not path.name.startswith("_")]
    return found


def checkout_commit(checkout: Path) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def _identifier(name: str) -> str:
    text = re.sub(r"\W", "_", name)
    return text if text and not text[0].isdigit() else f"p_{text}"


def parameter_names(forward: list[str], state_keys: list[str]) -> tuple[list[str], dict[str, str]]:
    """Kernel parameters: forward inputs as named, then each state key with dots as underscores
    (prefixed `state_` when that would collide)."""
    params = [_identifier(name) for name in forward]
    state: dict[str, str] = {}
    for key in state_keys:
        name = _identifier(key.replace(".", "_"))
        while name in params:
            name = f"state_{name}"
        params.append(name)
        state[name] = key
    return params, state


def anchors_in(ops: dict[str, int]) -> list[str]:
    """The anchor families the reference's op trace touches, as the aten packets they allow."""
    allowed: list[str] = []
    for members in ANCHOR_FAMILIES.values():
        if any(f"aten.{member}" in ops for member in members):
            allowed += [f"aten.{member}" for member in members]
    return allowed


@dataclass(frozen=True)
class Probe:
    """The problem run once, for real, at its public shape."""

    state_keys: list[str]
    # How many of Model.forward's parameters get_inputs() fills (the rest keep their defaults).
    input_count: int
    ops: dict[str, int]
    # The output (nearly) the same for two seeds, inputs and weights alike: degenerate at this shape.
    constant: bool
    float_outputs: bool
    float_inputs: bool


def _run_seeded(module: Any, seed: int) -> tuple[torch.nn.Module, list[Any], Any, dict[str, int]]:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
        with torch.no_grad(), OpTrace() as trace:
            outputs = model(*inputs)
    return model, inputs, outputs, dict(trace.ops)


# Outputs that move by less than this when every input and weight is redrawn are constant in all but name
# (a GroupNorm with one channel per group leaves float noise of ~1e-5 around zero).
CONSTANT_ATOL = 1e-4


def _same(a: Any, b: Any) -> bool:
    first, second = tensors_in(a), tensors_in(b)
    if len(first) != len(second) or any(x.shape != y.shape for x, y in zip(first, second)):
        return False
    for x, y in zip(first, second):
        if not x.dtype.is_floating_point:
            if not torch.equal(x, y):
                return False
        elif x.numel() and float((x.double() - y.double()).abs().nan_to_num(nan=1.0).max()) > CONSTANT_ATOL:
            return False
    return True


def probe_public(problem: ProblemFile, public: dict[str, int], label: str) -> Probe:
    module = instantiate(problem.source, public, label)
    try:
        model, inputs, outputs, ops = _run_seeded(module, 0)
        _, _, other, _ = _run_seeded(module, 1)
    except Exception as error:  # noqa: BLE001 - the reason goes into the report
        raise ProblemError(f"the reference fails at the public shape {public}: {type(error).__name__}: {str(error)[:300]}") from None
    if len(inputs) > len(problem.forward_params):
        raise ProblemError(f"get_inputs() returns {len(inputs)} values but Model.forward takes {len(problem.forward_params)}")
    for value in inputs:
        if not isinstance(value, (torch.Tensor, bool, int, float)):
            raise ProblemError(f"get_inputs() returns a {type(value).__name__}: only tensors and int/float/bool scalars can be passed")
    if isinstance(outputs, torch.Tensor):
        tensors = [outputs]
    elif isinstance(outputs, tuple) and outputs and all(isinstance(item, torch.Tensor) for item in outputs):
        tensors = list(outputs)
    else:
        raise ProblemError(f"Model.forward returns {type(outputs).__name__}: a tensor or a tuple of tensors is needed")
    return Probe(
        state_keys=list(model.state_dict()),
        input_count=len(inputs),
        ops=ops,
        constant=_same(outputs, other),
        float_outputs=any(t.dtype.is_floating_point for t in tensors),
        float_inputs=any(t.dtype.is_floating_point for t in tensors_in(inputs)),
    )


# Public budgets tried in turn while the scaled problem's output does not depend on its inputs
# (a GroupNorm left with one channel per group outputs zeros): scaled less, not marked degenerate.
BUDGETS = (PUBLIC_BUDGET, PUBLIC_BUDGET * 16, PUBLIC_BUDGET * 256)


def _constant_at(problem: ProblemFile, shape: dict[str, int], label: str) -> bool:
    """Whether the problem's output at `shape` is (nearly) the same for two seeds (False when it fails to run)."""
    module = instantiate(problem.source, shape, label)
    try:
        return _same(_run_seeded(module, 0)[2], _run_seeded(module, 1)[2])
    except Exception:  # noqa: BLE001 - a failure shows when the task is checked
        return False


def scale_and_probe(problem: ProblemFile, label: str) -> tuple[Scaled, Probe]:
    """The scaled shapes and the real run at the public one. The problem is scaled less while its
    output is constant at the public shape (a GroupNorm left with one channel per group outputs
    zeros); hidden shapes where it is constant are left out, and scaled less when that breaks the
    hidden-shape rule."""
    notes: list[str] = []
    for attempt, budget in enumerate(BUDGETS):
        last = attempt == len(BUDGETS) - 1
        scaled = scale(problem, label, budget)
        probe = probe_public(problem, scaled.public, label)
        if probe.constant and scaled.public != scaled.bench and not last:
            notes.append(f"the output is constant at {scaled.public}: scaled less")
            continue
        kept = [shape for shape in scaled.hidden if not _constant_at(problem, shape, label)]
        if len(kept) < len(scaled.hidden):
            notes.append(f"left out {len(scaled.hidden) - len(kept)} hidden shape(s) where the output is constant")
        scaled.hidden = kept
        problems = hidden_shape_problems(ShapeSets.model_construct(public=[scaled.public], hidden=kept, exempt=scaled.exempt, bench=[]))
        broken = sorted({name for name in scaled.public if any(name in text for text in problems)} - set(scaled.exempt))
        if broken and not last:
            notes.append(f"hidden shapes for {', '.join(broken)} are constant at this scale: scaled less")
            continue
        for name in broken:
            scaled.exempt[name] = "no larger hidden value keeps the output dependent on the inputs"
        break
    scaled.notes = notes + scaled.notes
    return scaled, probe


def contract(float_outputs: bool) -> list[dict[str, Any]]:
    if not float_outputs:
        return [{"kind": "bitwise"}, {"kind": "nontrivial"}]
    return [
        {"kind": "oracle", "factor": ORACLE_FACTOR, "relative_floor": ORACLE_RELATIVE_FLOOR, "metric": "max_abs"},
        {"kind": "allclose", "rtol": SANITY_TOLERANCE, "atol": SANITY_TOLERANCE},
        {"kind": "nontrivial"},
    ]


def _docstring(source: str) -> str:
    tree = ast.parse(source)
    model = next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Model"), None)
    text = (ast.get_docstring(model) if model is not None else None) or ast.get_docstring(tree) or ""
    return " ".join(text.split())


def task_document(
    task_id: str,
    version: int,
    level: int,
    path: Path,
    checkout: Path,
    commit: str | None,
    problem: ProblemFile,
    scaled: Scaled,
    probe: Probe,
    label: str,
) -> dict[str, Any]:
    forward = problem.forward_params[: probe.input_count]
    params, state = parameter_names(forward, probe.state_keys)
    anchors = anchors_in(probe.ops) if level >= 2 else []
    summary = _docstring(problem.source)
    policy = (
        "All of the computation must run in your Triton kernels (torch for allocation, views and launch plumbing only)."
        if not anchors
        else "The anchor ops below may stay in torch; every other op of the forward must run in your Triton kernels, and at least one must launch."
    )
    description = (
        f"KernelBench level {level} problem {path.stem}: implement Model.forward of the problem file below"
        + (f" ({summary})" if summary else "")
        + f". {policy} Sizes here are scaled for grading; the original sizes are the benchmark shape."
    )
    shapes, cost = shape_tables(problem.source, scaled, label)
    dispatch = problem_dispatch(problem.source, scaled.public, label)
    return {
        "id": task_id,
        "version": version,
        "title": f"KernelBench L{level} {path.stem}",
        "description": description,
        "params": params,
        "dtypes": ["float32"],
        "min_bytes": "0",
        "min_flops": "0",
        "timeout_s": 300.0,
        "allowed_torch": anchors,
        "shapes": shapes,
        "contract": contract(probe.float_outputs),
        "kernelbench": {
            "level": level,
            "problem_file": PROBLEM_FILE,
            "source_path": str(path.relative_to(checkout)),
            "checkout": str(checkout),
            "commit": commit,
            "sha256": hashlib.sha256(problem.source.encode("utf-8")).hexdigest(),
            "importer_version": IMPORTER_VERSION,
            "forward_inputs": params[: len(forward)],
            "state": state,
            "anchors": sorted({op for op in anchors if op in probe.ops}),
            "cost": cost,
            "scaling": "; ".join(scaled.notes),
            # What runs, for the metadata and the split family (not graded: no version bump).
            "op_kind": dispatch.kind,
            "output_kind": dispatch.output_kind,
            "aten_ops": len(op_sequence(dispatch.ops)),
            "dispatched": list(dispatch.ops),
        },
    }


def shape_tables(source: str, scaled: Scaled, label: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A scaled problem's `[shapes]` table and its `cost` rows (bytes and FLOPs per public, hidden and bench shape)."""
    shapes: dict[str, Any] = {"public": [scaled.public], "hidden": scaled.hidden, "bench": [scaled.bench]}
    if scaled.exempt:
        shapes["exempt"] = scaled.exempt
    cost = []
    for shape in [scaled.public, *scaled.hidden, scaled.bench]:
        measured = footprint(source, shape, label)
        cost.append({"shape": shape, "bytes": measured.bytes, "flops": measured.flops})
    return shapes, cost


def existing_document(folder: Path) -> dict[str, Any] | None:
    try:
        return tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def import_problem(checkout: Path, level: int, path: Path, out: Path, commit: str | None) -> ProblemImport:
    """Import one problem file into `out` (see the module docstring)."""
    import tomli_w

    relative = str(path.relative_to(checkout))
    task_id = f"kb/l{level}/{slug(path.stem)}"
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return ProblemImport(source_path=relative, outcome="failed", reason=f"cannot read it: {error}")
    sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest()
    folder = out / task_id
    existing = existing_document(folder)
    origin = (existing or {}).get("kernelbench", {})
    if existing is not None and origin.get("sha256") == sha256 and origin.get("importer_version") == IMPORTER_VERSION:
        return ProblemImport(source_path=relative, task_id=task_id, outcome="unchanged", version=existing.get("version"))
    version = int(existing.get("version", 0)) + 1 if existing is not None else 1
    label = task_id
    try:
        problem = parse_problem(source)
        scaled, probe = scale_and_probe(problem, label)
        document = task_document(task_id, version, level, path, checkout, commit, problem, scaled, probe, label)
    except ProblemError as error:
        return ProblemImport(source_path=relative, task_id=task_id, outcome="failed", reason=str(error))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROBLEM_FILE).write_text(source, encoding="utf-8")
    (folder / "task.toml").write_text(tomli_w.dumps(without_none(document)), encoding="utf-8")
    return ProblemImport(source_path=relative, task_id=task_id, outcome="updated" if existing is not None else "new", version=version)


def import_checkout(
    checkout: Path,
    out: Path,
    levels: tuple[int, ...] = LEVELS,
    on_problem: Callable[[ProblemImport], None] | None = None,
) -> ImportReport:
    """Import every problem of `levels` in `checkout` into the task root `out`."""
    checkout = checkout.resolve()
    if not checkout.is_dir():
        raise ProblemError(f"{checkout}: no such folder (clone https://github.com/ScalingIntelligence/KernelBench first)")
    problems = find_problems(checkout, levels)
    if not problems:
        raise ProblemError(f"{checkout}: no KernelBench/level{{1,2,3}} folders with problem files")
    report = ImportReport(checkout=str(checkout), commit=checkout_commit(checkout), out=str(out))
    for level, path in problems:
        result = import_problem(checkout, level, path, out, report.commit)
        report.problems.append(result)
        if on_problem is not None:
            on_problem(result)
    return report
