"""The task file schema: what a `tasks/<suite>/<name>/task.toml` may say.

Every model forbids unknown keys so a typo in a task file is an error, not a
silently ignored setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gym.contracts import Check
from gym.tasks.shape_expr import check_expression
from gym.tasks.splits import Split, family_of, hashed_split
from gym.worker.dtypes import DTYPE_NAMES

Shape = dict[str, int]
# What an input may hold in the grade's heavy-tailed and re-initialised trials (gym.tasks.hardened).
InputDomain = Literal["real", "nonnegative", "positive", "fixed"]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShapeSets(StrictModel):
    """Named shape parameters, e.g. `{M = 64, N = 100}`."""

    public: list[Shape] = Field(min_length=1, description="Shown to the agent and used in grading.")
    hidden: list[Shape] = Field(
        default_factory=list,
        description="Used in grading only; never shown by `kgym show` nor in any prompt or grade.",
    )
    bench: list[Shape] = Field(
        default_factory=list,
        description="Large shapes for timing on a GPU; never run under the interpreter.",
    )
    exempt: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Parameters the hidden-shape rule does not apply to, each with the reason (e.g. the op is only "
            "defined for powers of two); every other parameter must follow it (see hidden_shape_problems)."
        ),
    )

    @model_validator(mode="after")
    def _same_parameters(self) -> ShapeSets:
        names = set(self.public[0])
        for label, shapes in (("public", self.public), ("hidden", self.hidden), ("bench", self.bench)):
            for index, shape in enumerate(shapes):
                if set(shape) != names:
                    raise ValueError(f"{label}[{index}] has parameters {sorted(shape)}, expected {sorted(names)}")
                for key, value in shape.items():
                    if value < 0:
                        raise ValueError(f"{label}[{index}].{key} must be >= 0, got {value}")
        problems = hidden_shape_problems(self)
        if problems:
            raise ValueError("hidden shapes must reach past the public ones: " + "; ".join(problems))
        return self


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def hidden_shape_problems(shapes: ShapeSets) -> list[str]:
    """The hidden-shape rule: for every shape parameter (bar `exempt` ones), some hidden shape is
    larger than the largest public value and some hidden value is not a power of two, so a
    kernel specialised to sizes like the public ones (or to powers of two) meets a size it
    was not written for."""
    problems = []
    for key in shapes.public[0]:
        if key in shapes.exempt:
            continue
        largest = max(shape[key] for shape in shapes.public)
        hidden = [shape[key] for shape in shapes.hidden]
        if not hidden or max(hidden) <= largest:
            problems.append(f"no hidden {key} is larger than the largest public {key} ({largest})")
        if hidden and all(_power_of_two(value) for value in hidden):
            problems.append(f"every hidden {key} is a power of two ({hidden})")
    unknown = sorted(set(shapes.exempt) - set(shapes.public[0]))
    if unknown:
        problems.append(f"exempt names unknown parameters {unknown}")
    return problems


class ShapeCost(StrictModel):
    """The minimum bytes and FLOPs of one shape, measured when the task was imported."""

    shape: Shape = Field(description="The shape parameters this entry is for.")
    bytes: int = Field(ge=0, description="Bytes of every input, parameter, buffer and output at this shape (float32).")
    flops: int = Field(ge=0, description="FLOPs torch's FlopCounterMode counts for the reference at this shape.")


class KernelBenchSource(StrictModel):
    """Where an imported KernelBench problem came from, and how its Model maps onto a kernel."""

    level: int = Field(ge=1, le=4, description="KernelBench level (1: single ops, 2: fusions, 3: blocks).")
    problem_file: str = Field(pattern=r"^[A-Za-z0-9_.\-]+\.py$", description="The problem's source, copied verbatim into the task folder (this file name).")
    source_path: str = Field(description="The problem's path inside the KernelBench checkout, e.g. KernelBench/level1/19_ReLU.py.")
    checkout: str = Field(description="The checkout's folder at import time.")
    commit: str | None = Field(default=None, description="The checkout's git commit (None when it is not a git checkout).")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the problem's source; a change upstream bumps the task version.")
    importer_version: int = Field(ge=1, description="The importer that wrote the task (a newer one re-imports and bumps the version).")
    forward_inputs: list[str] = Field(description="Kernel parameters that are Model.forward's inputs, in order (the rest are its state).")
    state: dict[str, str] = Field(default_factory=dict, description="Kernel parameter -> the Model's state_dict key (parameters, then buffers).")
    anchors: list[str] = Field(
        default_factory=list,
        description="aten ops the reference dispatches that may stay in torch (levels 2-3: convolution, matmul, pooling).",
    )
    cost: list[ShapeCost] = Field(default_factory=list, description="Minimum bytes and FLOPs per shape (public, hidden, bench).")
    scaling: str = Field(default="", description="How the problem's sizes were scaled for CPU grading, for the record.")
    op_kind: str | None = Field(
        default=None, description="The op kind read from what the reference dispatches (gym.tasks.metadata): elementwise, reduction, matmul, ..."
    )
    output_kind: str | None = Field(default=None, description='The reference\'s output dtypes as the importer saw them: "float", "int", "bool", "float+int".')
    aten_ops: int | None = Field(default=None, ge=0, description="How many aten compute ops the reference dispatches (plumbing aside), as imported.")
    dispatched: list[str] = Field(
        default_factory=list,
        description=(
            "The aten compute ops the reference dispatches at the public shape (plumbing aside), overloads in order of first "
            "dispatch, as imported (gym.tasks.metadata.record_dispatch): what its op kind and split family are keyed by."
        ),
    )
    models: dict[str, float] = Field(
        default_factory=dict,
        description="Models whose forward runs this op at the bench shape (kgym import models), each with the op's share of that model's modelled time.",
    )


class TaskSpec(StrictModel):
    """One task: a reference op bound to shapes, dtypes and a closeness contract."""

    id: str = Field(
        pattern=r"^[a-z0-9_]+(/[a-z0-9_]+)+$",
        description='"<suite>/<name>" (a suite may nest: "kb/l1/19_relu"), equal to the task folder\'s path under its task root.',
    )
    version: int = Field(ge=1, description="Bumped whenever anything that changes grades changes.")
    title: str = Field(min_length=1, description="One-line title.")
    description: str = Field(min_length=1, description="What the agent reads: what to compute, layout notes, pitfalls.")
    reference: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*$",
        description='"module:function" in references/: the spec (absent for imported KernelBench problems).',
    )
    inputs: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*$",
        description=('"module:function" in references/: make_inputs(shape, dtype, generator, device, **options) -> dict.'),
    )
    oracle: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*$",
        description='Optional "module:function": a float64 oracle with the reference\'s signature.',
    )
    params: list[str] = Field(
        min_length=1,
        description="The kernel's parameter names, in order (the same as the reference's).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Fixed keyword options bound into the reference, input generator and oracle.",
    )
    stages: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*$",
        description="Optional \"module:function\" in references/: the block's named intermediate results, with the reference's "
        "signature, returning {stage name: tensor} in `stage_names` order. A submission that returns `(outputs..., *stages)` "
        "has the first stage outside `stage_rtol` named in its feedback when the contract fails (the verdict is on the outputs alone).",
    )
    stage_names: list[str] = Field(
        default_factory=list,
        description="The stages' names, in the order a submission returns them after its outputs; empty without `stages`.",
    )
    stage_rtol: float = Field(
        default=1e-3,
        gt=0,
        description="Normwise relative error of a stage, against the stages run in float64 on the same inputs, past which "
        "it is reported as the first divergent stage (exact comparison for integer and bool stages).",
    )
    dtypes: list[str] = Field(min_length=1, description="Dtype variants graded everywhere.")
    gpu_only_dtypes: list[str] = Field(
        default_factory=list,
        description="Dtype variants graded only on a GPU (the interpreter's bf16 arithmetic is wrong).",
    )
    shapes: ShapeSets = Field(description="Public, hidden and bench shape parameters.")
    contract: list[Check] = Field(min_length=1, description="All checks must hold on every trial.")
    allowed_torch: list[str] = Field(
        default_factory=list,
        description=(
            'torch calls this task allows beyond the torch policy\'s plumbing ("arange" or "torch.arange"); they widen '
            "the static audit and the runtime op trace alike (gym.worker.torch_policy)."
        ),
    )
    min_bytes: str = Field(description="Minimum bytes moved, as an expression of the shape parameters and `itemsize`.")
    min_flops: str = Field(description="Minimum FLOPs, as an expression of the shape parameters and `itemsize`.")
    timeout_s: float = Field(default=120.0, gt=0, description="Wall-clock limit for one grade's worker, in seconds.")
    kernelbench: KernelBenchSource | None = Field(
        default=None, description="Set on tasks imported from KernelBench: the problem's origin and its Model-to-kernel mapping."
    )
    validation_exempt: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "`kgym check-tasks` findings this task has on purpose, each with the reason (e.g. float16_reference_passes for a "
            "task whose contract allows low precision by design); they are reported, not failed."
        ),
    )
    input_domain: dict[str, InputDomain] = Field(
        default_factory=dict,
        description=(
            'What an input may hold in the hardened trials (heavy-tailed inputs, re-initialised weights): "real" (any sign), '
            '"nonnegative", "positive" (a log, a sqrt) or "fixed" (an input with structure, such as a sorted sequence: left '
            "as the generator drew it). Inputs not named are probed: mixed signs, then magnitudes only."
        ),
    )
    degenerate: str | None = Field(
        default=None,
        description="Why `kgym check-tasks` found this task unfit to grade (left out of suites unless asked for); None when fit.",
    )

    @field_validator("dtypes", "gpu_only_dtypes")
    @classmethod
    def _known_dtypes(cls, names: list[str]) -> list[str]:
        for name in names:
            if name not in DTYPE_NAMES:
                raise ValueError(f"unknown dtype {name!r}; known: {', '.join(sorted(DTYPE_NAMES))}")
        return names

    @field_validator("min_bytes", "min_flops")
    @classmethod
    def _valid_expression(cls, expr: str) -> str:
        check_expression(expr)
        return expr

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        if self.kernelbench is None and (self.reference is None or self.inputs is None):
            raise ValueError("reference: a task needs `reference` and `inputs` (or a [kernelbench] table)")
        if self.kernelbench is not None:
            unknown = [name for name in [*self.kernelbench.forward_inputs, *self.kernelbench.state] if name not in self.params]
            if unknown:
                raise ValueError(f"kernelbench: names parameters the task does not have: {unknown}")
        if bool(self.stages) != bool(self.stage_names):
            raise ValueError("stages: `stages` (the function) and `stage_names` go together")
        if len(set(self.stage_names)) != len(self.stage_names):
            raise ValueError(f"stage_names: has duplicates: {self.stage_names}")
        unknown_domain = [name for name in self.input_domain if name not in self.params]
        if unknown_domain:
            raise ValueError(f"input_domain: names parameters the task does not have: {unknown_domain}")
        if len(set(self.params)) != len(self.params):
            raise ValueError(f"params: has duplicates: {self.params}")
        overlap = set(self.dtypes) & set(self.gpu_only_dtypes)
        if overlap:
            raise ValueError(f"gpu_only_dtypes: overlaps dtypes: {sorted(overlap)}")
        shape_names = set(self.shapes.public[0]) | {"itemsize"}
        for field in ("min_bytes", "min_flops"):
            try:
                check_expression(getattr(self, field), allowed_names=shape_names)
            except ValueError as error:
                raise ValueError(f"{field}: {error}") from None
        all_dtypes = set(self.dtypes) | set(self.gpu_only_dtypes)
        for index, check in enumerate(self.contract):
            for name in check.dtypes or []:
                if name not in all_dtypes:
                    raise ValueError(f"contract.{index}.dtypes: names {name!r}, which the task does not have")
        for name in self.dtypes + self.gpu_only_dtypes:
            if not any(check.compares_values and (check.dtypes is None or name in check.dtypes) for check in self.contract):
                raise ValueError(f"contract: no check compares values for dtype {name} (add one, or scope one with dtypes = [...])")
        return self


class Task(StrictModel):
    """A loaded task: its spec plus where it lives."""

    spec: TaskSpec = Field(description="The parsed task.toml.")
    folder: Path = Field(description="Folder holding task.toml and solution.py.")
    references_dir: Path = Field(description='references/ folder the spec\'s "module:function" names resolve in.')
    split: Split | None = Field(
        default=None,
        description="train / val / test (gym.tasks.splits): recorded in the task root's splits.json, else hashed from the task's family.",
    )

    @model_validator(mode="before")
    @classmethod
    def _with_split(cls, data: Any) -> Any:
        """A task loaded without its root's splits.json gets the hashed split of its family."""
        if isinstance(data, dict) and data.get("split") is None:
            spec = data.get("spec")
            task_id = spec.id if isinstance(spec, TaskSpec) else spec.get("id") if isinstance(spec, dict) else None
            if isinstance(task_id, str):
                data = {**data, "split": hashed_split(family_of(task_id))}
        return data

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def suite(self) -> str:
        """Everything before the last part of the id: "l1", or "kb/l1" for "kb/l1/19_relu"."""
        return self.spec.id.rsplit("/", 1)[0]

    @property
    def solution_path(self) -> Path:
        return self.folder / "solution.py"

    @property
    def has_solution(self) -> bool:
        """Shipped tasks have a known-good solution.py; imported ones need not."""
        return self.solution_path.is_file()

    def solution_for(self, dsl: str = "triton") -> Path:
        """The shipped solution in kernel language `dsl`: solution.py (Triton) or solution_helion.py (Helion)."""
        return self.solution_path if dsl == "triton" else self.folder / f"solution_{dsl}.py"

    @property
    def task_file(self) -> Path:
        return self.folder / "task.toml"


def without_none(value: Any) -> Any:
    """TOML has no null: absent keys stand for None."""
    if isinstance(value, dict):
        return {key: without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_none(item) for item in value]
    return value
