"""`kgym check-tasks`: is a task fit to grade? Its reference is run the way the grader runs it,
and the task is checked for what would make grades meaningless.

For every dtype variant (GPU-only ones only on a GPU) and every public and hidden shape, with
the inputs the grader would use (`public_seed`), the validator checks that

- the reference and its input generator run (`reference_error`; the task's checking stops there);
- no compute dimension is empty (`degenerate_dimension`: an input with a zero-size dimension, such as
  a matmul's inner size of 0 or a reduction over nothing, or only empty outputs): the op computes
  nothing there, and an answer that ignores the empty input passes;
- the reference reads only its inputs (`out_of_bounds_read`): run on the same inputs placed in
  buffers whose memory past them holds two different sentinels (NaN and 1e4 for floats, 0 and 1
  for integers), it gives the same outputs; outputs that follow the sentinel (the same again with
  the first), or a run that fails with one sentinel only, show a read outside an input (an index
  past the end, such as a label beyond the class count). Such a reference also looks
  nondeterministic (it reads whatever memory holds), which is then not reported separately;
- the reference is bit-deterministic on identical inputs (`nondeterministic_reference`);
- its outputs depend on its inputs (`constant_output`) and, for KernelBench tasks with state, on
  the Model's weights (`ignores_weights`: bit-identical outputs with the state drawn from other
  seeds, or with the weights re-initialised as the grade's re-initialised trial does, or outputs
  the contract cannot tell from the task's own with those weights);
- its outputs are not all flat: values spanning almost nothing (`output_range_near_zero`), a
  standard deviation near zero next to their mean (`output_std_near_zero`), or an output axis of two or
  more along which nothing varies beyond the contract's tolerance (`constant_along_axis`: one
  slice broadcast along it passes every value check, so a kernel may compute one and copy it);
- no trivial answer (zeros, ones, the mean, an input passed through, the expected output with a
  NaN in its first element) passes every value check (`trivial_answer_passes`), and the
  contract's own `nontrivial` check holds (`nontrivial_self_check`), also on the inputs of
  `GRADE_DRAWS` other seeds, as a grade's secret draws them: a task whose self-check fails at
  grade time is an infra_error (`GradeResult.degenerate_task`, masked, never paid above a
  wrong answer), and check-tasks names it;
- for float32, the reference run in float16 fails the value checks (`float16_reference_passes`):
  otherwise the contract cannot tell a half-precision kernel from a float32 one;
- one call's tensors fit the sandbox's output limit, and a KernelBench bench shape's measured
  cost fits a GPU (`too_large`);

and, once per task, that the hidden shapes follow the hidden-shape rule (`hidden_shape_rule`).
An exception inside one check becomes that check's problem; it never stops the others.
Problems of one reason are reported once, at the first trial that shows them, with the other
trials that show it named.

API: `validate_task(task) -> TaskCheck`, `validate_tasks(tasks, on_done) -> list[TaskCheck]`;
`TaskCheck.ok` is False when any `TaskProblem` was found.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from gym.contracts import CHECK_MODELS, CheckBase, TrialEvidence
from gym.contracts.nontrivial import trivial_answers
from gym.grading.planning.plan import tensor_bytes
from gym.sandbox.base import Limits
from gym.schema.result import TrialResult
from gym.tasks import hardened
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.model import Shape, Task, hidden_shape_problems
from gym.tasks.references import as_output_list, call_args, clone_args, oracle_outputs, reference_fn, reference_outputs, stage_outputs
from gym.tasks.shape_expr import evaluate
from gym.worker.dtypes import dtype_from_name, same_bits

REFERENCE_ERROR = "reference_error"
NONDETERMINISTIC_REFERENCE = "nondeterministic_reference"
CONSTANT_OUTPUT = "constant_output"
IGNORES_WEIGHTS = "ignores_weights"
TRIVIAL_ANSWER_PASSES = "trivial_answer_passes"
FLOAT16_REFERENCE_PASSES = "float16_reference_passes"
NONTRIVIAL_SELF_CHECK = "nontrivial_self_check"
HIDDEN_SHAPE_RULE = "hidden_shape_rule"
TOO_LARGE = "too_large"
STAGES_BROKEN = "stages_broken"
DEGENERATE_DIMENSION = "degenerate_dimension"
OUT_OF_BOUNDS_READ = "out_of_bounds_read"
OUTPUT_RANGE_NEAR_ZERO = "output_range_near_zero"
OUTPUT_STD_NEAR_ZERO = "output_std_near_zero"
CONSTANT_ALONG_AXIS = "constant_along_axis"

# Every reason a problem may carry, in the order checks run.
REASONS: tuple[str, ...] = (
    HIDDEN_SHAPE_RULE,
    TOO_LARGE,
    REFERENCE_ERROR,
    DEGENERATE_DIMENSION,
    OUT_OF_BOUNDS_READ,
    NONDETERMINISTIC_REFERENCE,
    CONSTANT_OUTPUT,
    OUTPUT_RANGE_NEAR_ZERO,
    OUTPUT_STD_NEAR_ZERO,
    CONSTANT_ALONG_AXIS,
    IGNORES_WEIGHTS,
    TRIVIAL_ANSWER_PASSES,
    FLOAT16_REFERENCE_PASSES,
    NONTRIVIAL_SELF_CHECK,
    STAGES_BROKEN,
)

# A bench shape's measured footprint (KernelBench cost entries) must fit one GPU's memory.
GPU_MEMORY_BYTES = 64 << 30
# When two seeds give bit-identical outputs, this many more seeds are tried before calling the
# output constant (a discrete output at a tiny shape may coincide once by chance).
EXTRA_SEEDS = 2
# The contract's `nontrivial` self-check also runs on this many other seeds' inputs (a grade draws its
# inputs from a secret seed: a self-check that holds on the public seed alone may fail there).
GRADE_DRAWS = 2
CPU = torch.device("cpu")
# The check kinds whose failure blames the task, not the submission (`nontrivial`): a degenerate task.
TASK_BLAMED_KINDS: frozenset[str] = frozenset(str(model.model_fields["kind"].default) for model in CHECK_MODELS if model.blame == "task")
# An output whose values span less than this (times max(1, its largest magnitude)) is flat
# (`output_range_near_zero`); one whose standard deviation is below STD_FRACTION of
# max(|mean|, STD_FLOOR) barely varies (`output_std_near_zero`). Outputs of one element are exempt.
RANGE_FRACTION = 1e-5
STD_FRACTION = 1e-4
STD_FLOOR = 1e-2
# Longest exception text kept in a problem's detail.
ERROR_CHARS = 500
# The out-of-bounds check places each input at the start of a buffer (storage offset 0, as an input
# is given: `as_strided` with an explicit storage offset reads the same elements) followed by this
# many sentinel elements (its own size, at least PAD_MIN and at most PAD_MAX), once with each
# sentinel pair: (floating, integer).
PAD_MIN = 64
PAD_MAX = 1 << 16
SENTINELS = ((float("nan"), 0), (1e4, 1))


class TaskProblem(BaseModel):
    """One reason a task is unfit to grade."""

    model_config = ConfigDict(frozen=True)

    reason: str = Field(description="What is wrong, one of gym.grading.validation.task_validation.REASONS (e.g. constant_output, reference_error).")
    detail: str = Field(description="Where and how: the dtype and shape (trial label), figures or the exception text.")


class TaskCheck(BaseModel):
    """The validation of one task (`kgym check-tasks`)."""

    model_config = ConfigDict(frozen=True)

    task_id: str = Field(description='The task\'s id, e.g. "l1/softmax" or "kb/l1/19_relu".')
    version: int = Field(description="The task version checked.")
    ok: bool = Field(description="True when no problem was found.")
    problems: list[TaskProblem] = Field(default_factory=list, description="Each problem found, at most one per reason, in check order.")
    exempted: list[TaskProblem] = Field(
        default_factory=list,
        description="Findings the task file exempts (`validation_exempt`, each with its justification), kept for the record; they do not fail the task.",
    )
    seconds: float = Field(ge=0, description="Wall-clock seconds the validation took.")


@dataclass
class _Trial:
    """One (dtype, shape) case with the grader's inputs and the reference's outputs."""

    label: str
    dtype_name: str
    dtype: torch.dtype
    kind: str
    index: int
    shape: Shape
    inputs: dict[str, Any]
    expected: list[torch.Tensor]
    oracle: list[torch.Tensor] | None
    checks: list[CheckBase]
    # Inputs under other seeds, by number (drawn once, shared by the checks that need them).
    alternates: dict[int, dict[str, Any]] = field(default_factory=dict)
    # The reference's outputs on those inputs, by number (computed once).
    alternate_outputs: dict[int, list[torch.Tensor]] = field(default_factory=dict)

    @property
    def value_checks(self) -> list[CheckBase]:
        return [check for check in self.checks if check.compares_values]

    def evidence(self, outputs: list[torch.Tensor]) -> TrialEvidence:
        """The evidence the grader builds for a candidate that returned `outputs` on this trial."""
        return TrialEvidence(outputs=outputs, expected=self.expected, inputs=self.inputs, oracle=self.oracle, value_checks=self.value_checks)


class _Findings:
    """Problems by reason: the first detail of each, then the labels of later trials that showed it."""

    def __init__(self) -> None:
        self._first: dict[str, str] = {}
        self._more: dict[str, list[str]] = {}

    def add(self, reason: str, where: str, detail: str) -> None:
        if reason not in self._first:
            self._first[reason] = f"{where}: {detail}" if where else detail
            self._more[reason] = []
        elif where and where not in self._more[reason]:
            self._more[reason].append(where)

    def problems(self) -> list[TaskProblem]:
        ordered = sorted(self._first, key=lambda reason: REASONS.index(reason) if reason in REASONS else len(REASONS))
        result = []
        for reason in ordered:
            detail = self._first[reason]
            more = self._more[reason]
            if more:
                shown = ", ".join(more[:6]) + (f", ... ({len(more)} in all)" if len(more) > 6 else "")
                detail += f" (also at {shown})"
            result.append(TaskProblem(reason=reason, detail=detail))
        return result


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."


def _outcome(check: Callable[[], str | None]) -> str | None:
    """Run one check: its detail, or the exception it raised in words (a broken check is a finding, never fatal)."""
    try:
        return check()
    except Exception as error:  # noqa: BLE001 - a broken check is reported, never fatal
        return f"the check raised {_error_text(error)}"


def _guarded(findings: _Findings, reason: str, where: str, check: Callable[[], str | None]) -> None:
    """Run one check; a returned detail or an exception becomes a problem with that reason."""
    detail = _outcome(check)
    if detail is not None:
        findings.add(reason, where, detail)


def _shape_text(shape: Shape) -> str:
    return "{" + ", ".join(f"{key}={value}" for key, value in shape.items()) + "}"


def _dtype_names(task: Task, device: torch.device) -> list[str]:
    """The dtype variants graded on `device` (GPU-only ones only on a GPU)."""
    return list(task.spec.dtypes) + (list(task.spec.gpu_only_dtypes) if device.type == "cuda" else [])


def _shapes(task: Task) -> list[tuple[str, int, Shape]]:
    shapes = task.spec.shapes
    return [("public", i, shape) for i, shape in enumerate(shapes.public)] + [("hidden", i, shape) for i, shape in enumerate(shapes.hidden)]


def _alternate_seed(task: Task, dtype_name: str, kind: str, index: int, number: int) -> int:
    """A seed other than the grader's public one for this trial (number 1, 2, ...)."""
    return public_seed(task.id, dtype_name, f"{kind}-check-tasks-{number}", index)


def _make_trial(task: Task, dtype_name: str, kind: str, index: int, shape: Shape, device: torch.device) -> _Trial:
    dtype = dtype_from_name(dtype_name)
    checks = [check for check in task.spec.contract if check.applies_to(dtype)]
    inputs = generate_inputs(task, shape, dtype, public_seed(task.id, dtype_name, kind, index), device)
    expected, _ = reference_outputs(task, inputs, shape)
    oracle = oracle_outputs(task, inputs, shape) if any(check.needs_oracle for check in checks) else None
    label = f"{dtype_name} {kind} #{index + 1} {_shape_text(shape)}"
    return _Trial(label, dtype_name, dtype, kind, index, shape, inputs, expected, oracle, checks)


def _same_outputs(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Bit for bit (NaN-safe; integers exactly), output by output."""
    return len(a) == len(b) and all(same_bits(x.detach().cpu(), y.detach().cpu()) for x, y in zip(a, b))


def _differences(a: list[torch.Tensor], b: list[torch.Tensor]) -> str:
    """How two output lists differ, in words."""
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} outputs"
    parts = []
    for index, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            parts.append(f"output {index}: {tuple(x.shape)}/{x.dtype} vs {tuple(y.shape)}/{y.dtype}")
        elif not same_bits(x.cpu(), y.cpu()):
            equal = _bits_equal(x, y) if x.is_floating_point() else x.detach().cpu() == y.detach().cpu()
            parts.append(f"output {index}: {int((~equal).sum())} of {x.numel()} element(s) differ")
    return "; ".join(parts)


def _bits_equal(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise bit equality of two floating tensors of one dtype (NaN equals NaN)."""
    a, b = x.detach().cpu(), y.detach().cpu()
    return (a == b) | (torch.isnan(a) & torch.isnan(b))


def _all_empty(outputs: list[torch.Tensor]) -> bool:
    return all(output.numel() == 0 for output in outputs)


# ----------------------------------------------------------------------------- per-task checks


def _check_hidden_rule(task: Task) -> str | None:
    problems = hidden_shape_problems(task.spec.shapes)
    return "; ".join(problems) if problems else None


def _check_bench_cost(task: Task) -> list[tuple[str, str]]:
    """(where, detail) for each KernelBench bench shape whose measured bytes exceed a GPU's memory."""
    source = task.spec.kernelbench
    if source is None:
        return _check_bench_bytes(task)
    found = []
    for index, shape in enumerate(task.spec.shapes.bench):
        entry = next((cost for cost in source.cost if cost.shape == shape), None)
        if entry is not None and entry.bytes > GPU_MEMORY_BYTES:
            found.append(
                (
                    f"bench #{index + 1} {_shape_text(shape)}",
                    f"measured {entry.bytes / 2**30:.1f} GiB of inputs, state and outputs, more than a GPU's {GPU_MEMORY_BYTES / 2**30:.0f} GiB",
                )
            )
    return found


def _check_bench_bytes(task: Task) -> list[tuple[str, str]]:
    """(where, detail) for each bench shape of our own tasks whose minimum bytes (the task's
    `min_bytes` at float32) exceed what the sandbox lets one job write: such a timed call is
    killed on a GPU whatever the kernel."""
    limit = Limits().output_bytes
    found = []
    for index, shape in enumerate(task.spec.shapes.bench):
        moved = evaluate(task.spec.min_bytes, {**shape, "itemsize": 4})
        if moved > limit:
            found.append(
                (
                    f"bench #{index + 1} {_shape_text(shape)}",
                    f"moves at least {moved / 2**30:.1f} GiB, more than the sandbox's output limit ({limit / 2**30:.0f} GiB)",
                )
            )
    return found


# ----------------------------------------------------------------------------- per-trial checks


def _check_too_large(trial: _Trial) -> str | None:
    limit = Limits().output_bytes
    held = tensor_bytes(trial.inputs) + tensor_bytes(trial.expected) + tensor_bytes(trial.oracle or [])
    if held > limit:
        return f"one call holds {held / 2**20:.1f} MiB of inputs, expected outputs and oracle, more than the sandbox's output limit ({limit / 2**20:.0f} MiB)"
    return None


def _check_deterministic(task: Task, trial: _Trial) -> str | None:
    again, _ = reference_outputs(task, trial.inputs, trial.shape)
    if _same_outputs(trial.expected, again):
        return None
    return f"two reference runs on identical inputs differ ({_differences(trial.expected, again)})"


def _check_degenerate_dimension(task: Task, trial: _Trial) -> str | None:
    """An input tensor with a zero-size dimension, or nothing but empty outputs."""
    empty = [f"{name} {tuple(value.shape)}" for name, value in trial.inputs.items() if isinstance(value, torch.Tensor) and value.dim() and value.numel() == 0]
    if empty:
        return f"{'inputs' if len(empty) > 1 else 'input'} {', '.join(empty)} with a zero-size dimension: the op computes nothing along it"
    if trial.expected and _all_empty(trial.expected):
        shapes = ", ".join(str(tuple(output.shape)) for output in trial.expected)
        return f"every output is empty ({shapes}): there is nothing to compute"
    return None


def _padding(value: torch.Tensor) -> int:
    return min(max(value.numel(), PAD_MIN), PAD_MAX)


def _placed(value: Any, fill: tuple[float, int]) -> Any:
    """A copy of `value` (same shape, strides and values) at the start of a larger buffer whose other
    elements (gaps between strided elements, then the padding) are the sentinel `fill` (floating,
    integer); non-tensors, empty and overlapping (broadcast) tensors as they are."""
    if not isinstance(value, torch.Tensor):
        return value
    if value.numel() == 0 or any(stride <= 0 and size > 1 for size, stride in zip(value.shape, value.stride())):
        return value.clone()
    extent = 1 + sum((size - 1) * stride for size, stride in zip(value.shape, value.stride()))
    pad = _padding(value)
    sentinel: float | int | bool = fill[0] if value.is_floating_point() else bool(fill[1]) if value.dtype == torch.bool else fill[1]
    buffer = torch.full((extent + pad,), sentinel, dtype=value.dtype, device=value.device)
    placed = buffer.as_strided(value.shape, value.stride(), 0)
    placed.copy_(value)
    return placed


def _placed_outputs(task: Task, trial: _Trial, fill: tuple[float, int]) -> list[torch.Tensor] | str:
    """The reference's outputs on the trial's inputs placed among the sentinel `fill`, or its exception in words."""
    placed = {name: _placed(value, fill) for name, value in trial.inputs.items()}
    try:
        outputs, _ = as_output_list(reference_fn(task, trial.shape)(*call_args(placed, task.spec.params)))
    except Exception as error:  # noqa: BLE001 - a failure with one sentinel only is the finding
        return _error_text(error)
    return [output.detach() for output in outputs]


def _same_run(a: list[torch.Tensor] | str, b: list[torch.Tensor] | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    return _same_outputs(a, b)


def _check_out_of_bounds(task: Task, trial: _Trial) -> str | None:
    """Outputs that follow what lies past the inputs in memory (see SENTINELS): different with the
    second sentinel, the same again with the first (a merely nondeterministic reference is left to
    the determinism check)."""
    if not any(isinstance(value, torch.Tensor) and value.numel() for value in trial.inputs.values()):
        return None
    first, second = (_placed_outputs(task, trial, fill) for fill in SENTINELS)
    if _same_run(first, second):
        return None
    if not _same_run(first, _placed_outputs(task, trial, SENTINELS[0])):
        return None
    where = "the memory past the inputs (NaN or 1e4 after floats, 0 or 1 after integers)"
    if isinstance(first, str) or isinstance(second, str):
        error = first if isinstance(first, str) else second
        return f"the reference fails or not depending on {where}: it reads outside its inputs ({error})"
    return f"the outputs change with {where}: the reference reads outside its inputs ({_differences(first, second)})"


def _alternate_inputs(task: Task, trial: _Trial, number: int, device: torch.device) -> dict[str, Any]:
    """The trial's inputs under its `number`-th other seed (the same tensors on every ask: callers clone)."""
    if number not in trial.alternates:
        seed = _alternate_seed(task, trial.dtype_name, trial.kind, trial.index, number)
        trial.alternates[number] = generate_inputs(task, trial.shape, trial.dtype, seed, device)
    return trial.alternates[number]


def _alternate_outputs(task: Task, trial: _Trial, number: int, device: torch.device) -> list[torch.Tensor]:
    """The reference's outputs on the trial's `number`-th other inputs (computed once)."""
    if number not in trial.alternate_outputs:
        trial.alternate_outputs[number], _ = reference_outputs(task, _alternate_inputs(task, trial, number, device), trial.shape)
    return trial.alternate_outputs[number]


def _check_constant(task: Task, trial: _Trial, device: torch.device) -> str | None:
    if _all_empty(trial.expected):
        return None
    for number in range(1, 2 + EXTRA_SEEDS):
        other = _alternate_outputs(task, trial, number, device)
        if not _same_outputs(trial.expected, other):
            return None
    return f"the outputs are bit-identical for {2 + EXTRA_SEEDS} different seeds (they do not depend on the inputs)"


def _check_weights(task: Task, trial: _Trial, device: torch.device) -> str | None:
    names = hardened.float_state_params(task, trial.inputs)
    if not names or _all_empty(trial.expected):
        return None
    reinitialised = _check_reinitialised(task, trial)
    if reinitialised is not None:
        return reinitialised
    differed = False
    for number in range(1, 2 + EXTRA_SEEDS):
        other = _alternate_inputs(task, trial, number, device)
        if all(same_bits(trial.inputs[name], other[name]) for name in names):
            continue  # this seed drew the same state (e.g. ones and zeros): it tells nothing
        differed = True
        mixed = dict(trial.inputs)
        mixed.update({name: other[name] for name in names})
        outputs, _ = reference_outputs(task, mixed, trial.shape)
        if not _same_outputs(trial.expected, outputs):
            return None
    if not differed:
        return None  # the state never depends on the seed: nothing to learn
    return f"the outputs are bit-identical with the Model's state ({', '.join(names)}) drawn from other seeds (they do not depend on the weights)"


def _check_reinitialised(task: Task, trial: _Trial) -> str | None:
    """The weights re-initialised as the grade's re-initialised trial draws them: the reference's
    outputs must change, and by more than the contract's tolerance."""
    seed = public_seed(task.id, trial.dtype_name, f"{trial.kind}-check-tasks-reinit", trial.index)
    derived = hardened.reinitialised_inputs(task, trial.inputs, trial.shape, seed, trial.checks, trial.expected)
    if derived is None:
        return None
    outputs, _ = reference_outputs(task, derived.inputs, trial.shape)
    names = ", ".join(derived.changed)
    if _same_outputs(trial.expected, outputs):
        return f"the outputs are bit-identical with the Model's state ({names}) re-initialised (they do not depend on the weights)"
    oracle = oracle_outputs(task, derived.inputs, trial.shape) if trial.oracle is not None else None
    evidence = TrialEvidence(outputs=trial.expected, expected=outputs, inputs=derived.inputs, oracle=oracle, value_checks=trial.value_checks)
    if trial.value_checks and all(check.compare(trial.expected, evidence).passed for check in trial.value_checks):
        checks = ", ".join(check.describe() for check in trial.value_checks)
        return f"with the Model's state ({names}) re-initialised, the outputs of the original weights still pass every value check ({checks})"
    return None


def _finite_values(output: torch.Tensor) -> torch.Tensor:
    values = output.detach().cpu()
    values = values.double() if values.is_floating_point() else values.to(torch.float64)
    return values[torch.isfinite(values)]


def _flatness(output: torch.Tensor) -> tuple[str, str] | None:
    """(reason, detail) when one output is flat (see RANGE_FRACTION, STD_FRACTION); None otherwise or for one element."""
    values = _finite_values(output)
    if values.numel() < 2:
        return None
    spread = float(values.max() - values.min())
    if spread <= RANGE_FRACTION * max(1.0, float(values.abs().max())):
        return OUTPUT_RANGE_NEAR_ZERO, f"values span {spread:.3g} (from {float(values.min()):.6g} to {float(values.max()):.6g}): a constant answers it"
    std, mean = float(values.std()), float(values.mean())
    if std <= STD_FRACTION * max(abs(mean), STD_FLOOR):
        return OUTPUT_STD_NEAR_ZERO, f"standard deviation is {std:.3g} around a mean of {mean:.6g}: almost every element is the same"
    return None


def _check_flat(trial: _Trial, reason: str) -> str | None:
    """`reason` when every output of two or more elements is flat, and at least one for that reason
    (one flat output beside informative ones, such as linalg's `info`, is not a degenerate task)."""
    found = [(index, _flatness(output)) for index, output in enumerate(trial.expected) if output.numel() >= 2]
    if not found or any(flat is None for _, flat in found):
        return None
    details = [f"output {index}'s {flat[1]}" for index, flat in found if flat is not None and flat[0] == reason]
    return "; ".join(details) if details else None


def _check_range(trial: _Trial) -> str | None:
    return _check_flat(trial, OUTPUT_RANGE_NEAR_ZERO)


def _check_std(trial: _Trial) -> str | None:
    return _check_flat(trial, OUTPUT_STD_NEAR_ZERO)


def _broadcast_slice(output: torch.Tensor, dim: int) -> torch.Tensor:
    """`output` with its first slice along `dim` copied along that axis."""
    return output.narrow(dim, 0, 1).expand_as(output).contiguous()


def _check_axes(trial: _Trial) -> str | None:
    """An output axis (size two or more) along which one slice broadcast passes every value check."""
    if not trial.value_checks or _all_empty(trial.expected):
        return None
    for index, output in enumerate(trial.expected):
        if output.dim() < 2 or _flatness(output) is not None:
            continue  # constant along every axis: flat, which the flatness filters judge (all outputs together)
        for dim in range(output.dim()):
            if output.shape[dim] < 2:
                continue
            answer = list(trial.expected)
            answer[index] = _broadcast_slice(output, dim)
            if _same_outputs(answer, trial.expected) or _passes_all(trial, answer):
                checks = ", ".join(check.describe() for check in trial.value_checks)
                return (
                    f"output {index} {tuple(output.shape)} does not vary along axis {dim}: its first slice copied along it passes every value check ({checks})"
                )
    return None


def _passes_all(trial: _Trial, answer: list[torch.Tensor]) -> bool:
    evidence = trial.evidence(answer)
    return bool(trial.value_checks) and all(check.compare(answer, evidence).passed for check in trial.value_checks)


def _nan_answers(expected: list[torch.Tensor]) -> dict[str, list[torch.Tensor]]:
    """The expected outputs with a NaN in the first element of each floating one (the value checks must see a
    single NaN); none when no floating output has a finite first element to spoil."""
    spoiled, changed = [], False
    for e in expected:
        copy = e.clone()
        first = (0,) * copy.dim()
        if copy.is_floating_point() and copy.numel() and bool(torch.isfinite(copy[first])):
            copy[first] = float("nan")
            changed = True
        spoiled.append(copy)
    return {"the expected output with a NaN in its first element": spoiled} if changed else {}


def _check_trivial(trial: _Trial) -> str | None:
    if _all_empty(trial.expected):
        return None
    answers = trivial_answers(trial.expected, trial.inputs) | _nan_answers(trial.expected)
    survivors = [label for label, answer in answers.items() if _passes_all(trial, answer)]
    if not survivors:
        return None
    checks = ", ".join(check.describe() for check in trial.value_checks)
    return f"these trivial answers pass every value check ({checks}): {', '.join(survivors)}"


def _float16_outputs(task: Task, trial: _Trial) -> list[torch.Tensor] | None:
    """The reference run with every floating tensor argument in float16, outputs cast back; None when that raises."""
    halved = {
        name: value.to(torch.float16) if isinstance(value, torch.Tensor) and value.is_floating_point() else value
        for name, value in clone_args(trial.inputs).items()
    }
    try:
        outputs, _ = as_output_list(reference_fn(task, trial.shape)(*call_args(halved, task.spec.params)))
    except Exception:  # noqa: BLE001 - an op without half support: the check does not apply
        return None
    return [output.detach().to(expected.dtype) for output, expected in zip(outputs, trial.expected)]


def _check_float16(task: Task, trial: _Trial) -> str | None:
    if trial.dtype != torch.float32 or _all_empty(trial.expected):
        return None
    # Integer outputs (argmax, indices): a half-precision computation that picks the same ones is right.
    if not any(expected.is_floating_point() for expected in trial.expected):
        return None
    if not any(isinstance(value, torch.Tensor) and value.is_floating_point() for value in trial.inputs.values()):
        return None
    outputs = _float16_outputs(task, trial)
    if outputs is None or len(outputs) != len(trial.expected) or not _passes_all(trial, outputs):
        return None
    checks = ", ".join(check.describe() for check in trial.value_checks)
    return f"the reference computed in float16 passes every value check ({checks}): the contract cannot tell half precision from float32"


def _nontrivial_checks(trial: _Trial) -> list[CheckBase]:
    return [check for check in trial.checks if check.kind == "nontrivial"]


def _check_nontrivial(trial: _Trial) -> str | None:
    """The contract's `nontrivial` checks, evaluated on the trial as the grader evaluates them."""
    failing = []
    for check in _nontrivial_checks(trial):
        outcome = check.evaluate(trial.evidence(trial.expected))
        if not outcome.passed:
            failing.append(outcome.message or "failed")
    return "; ".join(failing) if failing else None


def _check_nontrivial_drawn(task: Task, trial: _Trial, device: torch.device) -> str | None:
    """The contract's `nontrivial` checks on `GRADE_DRAWS` other seeds' inputs, as a grade's secret draws them."""
    for number in range(1, GRADE_DRAWS + 1):
        inputs = _alternate_inputs(task, trial, number, device)
        expected = _alternate_outputs(task, trial, number, device)
        oracle = oracle_outputs(task, inputs, trial.shape) if any(check.needs_oracle for check in trial.checks) else None
        drawn = _Trial(trial.label, trial.dtype_name, trial.dtype, trial.kind, trial.index, trial.shape, inputs, expected, oracle, trial.checks)
        detail = _check_nontrivial(drawn)
        if detail is not None:
            return f"with inputs from another seed (as a grade's secret draws them): {detail}"
    return None


def degenerate_at_grade(trials: list[TrialResult]) -> str | None:
    """Why a grade found its task degenerate: each failed task self-check (`TASK_BLAMED_KINDS`) by trial
    label; None when none failed (GradeResult.degenerate_task)."""
    found = [
        f"{trial.label}: {outcome.kind}: {outcome.message or 'failed'}"
        for trial in trials
        for outcome in trial.checks
        if not outcome.passed and outcome.kind in TASK_BLAMED_KINDS
    ]
    return "; ".join(found)[:2000] or None


def _check_trial(task: Task, trial: _Trial, device: torch.device, findings: _Findings) -> None:
    where = trial.label
    _guarded(findings, TOO_LARGE, where, lambda: _check_too_large(trial))
    _guarded(findings, DEGENERATE_DIMENSION, where, lambda: _check_degenerate_dimension(task, trial))
    # The plain rerun first (the reference's second call), then the placed runs. A reference that reads
    # outside its inputs differs between runs as memory does: said once, as that.
    rerun = _outcome(lambda: _check_deterministic(task, trial))
    outside = _outcome(lambda: _check_out_of_bounds(task, trial))
    if outside is not None:
        findings.add(OUT_OF_BOUNDS_READ, where, outside)
    elif rerun is not None:
        findings.add(NONDETERMINISTIC_REFERENCE, where, rerun)
    _guarded(findings, CONSTANT_OUTPUT, where, lambda: _check_constant(task, trial, device))
    _guarded(findings, OUTPUT_RANGE_NEAR_ZERO, where, lambda: _check_range(trial))
    _guarded(findings, OUTPUT_STD_NEAR_ZERO, where, lambda: _check_std(trial))
    _guarded(findings, CONSTANT_ALONG_AXIS, where, lambda: _check_axes(trial))
    if task.spec.kernelbench is not None:
        _guarded(findings, IGNORES_WEIGHTS, where, lambda: _check_weights(task, trial, device))
    held: list[bool] = []

    def nontrivial() -> str | None:
        detail = _check_nontrivial(trial)
        held.append(detail is None and bool(_nontrivial_checks(trial)))
        if detail is None and held == [True]:
            return _check_nontrivial_drawn(task, trial, device)
        return detail

    _guarded(findings, NONTRIVIAL_SELF_CHECK, where, nontrivial)
    # A `nontrivial` check that held compared the same trivial answers with the same value checks
    # on the same evidence: no trivial answer passes, and the comparisons need not run twice.
    _guarded(findings, TRIVIAL_ANSWER_PASSES, where, lambda: None if held == [True] else _check_trivial(trial))
    # At the public shapes: a tiny hidden shape (a handful of elements, made for masks and tails)
    # accumulates too little for half precision to show, whatever the contract.
    if trial.kind == "public":
        _guarded(findings, FLOAT16_REFERENCE_PASSES, where, lambda: _check_float16(task, trial))
    if task.spec.stages:
        _guarded(findings, STAGES_BROKEN, where, lambda: _check_stages(task, trial))


def _check_stages(task: Task, trial: _Trial) -> str | None:
    """A block's stage function answers every declared stage (ReferenceLoadError otherwise), each finite."""
    stages = stage_outputs(task, trial.inputs)
    broken = [name for name, value in stages.items() if value.dtype.is_floating_point and not bool(torch.isfinite(value).all())]
    return f"stages {broken} hold inf or nan in float64" if broken else None


# ----------------------------------------------------------------------------- entry points


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to `threads` inside, restored after (None: left alone)."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def validate_task(task: Task, device: torch.device = CPU, *, threads: int | None = 1) -> TaskCheck:
    """Check one task (see the module docstring); never raises for a broken task.

    `threads`: torch's intra-op threads while it runs (restored after; None leaves torch's
    setting). The default, one, suits the small shapes checked here: on a busy 2-core machine
    torch's default made validation 5-20x slower."""
    started = time.perf_counter()
    findings = _Findings()
    with _torch_threads(threads):
        _validate_into(task, device, findings)
    found = findings.problems()
    exempt = task.spec.validation_exempt
    problems = [problem for problem in found if problem.reason not in exempt]
    exempted = [problem.model_copy(update={"detail": f"{problem.detail} [exempt: {exempt[problem.reason]}]"}) for problem in found if problem.reason in exempt]
    return TaskCheck(
        task_id=task.id,
        version=task.spec.version,
        ok=not problems,
        problems=problems,
        exempted=exempted,
        seconds=round(time.perf_counter() - started, 3),
    )


def _validate_into(task: Task, device: torch.device, findings: _Findings) -> None:
    _guarded(findings, HIDDEN_SHAPE_RULE, "", lambda: _check_hidden_rule(task))
    try:
        for where, detail in _check_bench_cost(task):
            findings.add(TOO_LARGE, where, detail)
    except Exception as error:  # noqa: BLE001 - reported, never fatal
        findings.add(TOO_LARGE, "bench", f"the check raised {_error_text(error)}")
    for dtype_name in _dtype_names(task, device):
        for kind, index, shape in _shapes(task):
            try:
                trial = _make_trial(task, dtype_name, kind, index, shape, device)
            except Exception as error:  # noqa: BLE001 - the reference's failure is the finding
                findings.add(REFERENCE_ERROR, f"{dtype_name} {kind} #{index + 1} {_shape_text(shape)}", _error_text(error))
                return  # nothing more can be learnt from a reference that does not run
            _check_trial(task, trial, device, findings)


def validate_tasks(
    tasks: Iterable[Task],
    on_done: Callable[[TaskCheck], None] | None = None,
    device: torch.device = CPU,
    *,
    threads: int | None = 1,
) -> list[TaskCheck]:
    """Check each task in turn (see validate_task); `on_done` hears each result as it is ready (for progress output)."""
    results = []
    for task in tasks:
        result = validate_task(task, device, threads=threads)
        results.append(result)
        if on_done is not None:
            on_done(result)
    return results


def degenerate_reason(check: TaskCheck) -> str | None:
    """The `degenerate` text a failed check leaves in an imported task's folder (None when it passed)."""
    if check.ok:
        return None
    return "; ".join(f"{problem.reason}: {problem.detail}" for problem in check.problems)[:2000]


def mark_imported(task: Task, check: TaskCheck) -> bool:
    """Record the verdict in an imported task's task.toml (`degenerate = "..."` or none); shipped
    tasks are never rewritten (they must pass). True when the file changed."""
    import tomllib

    import tomli_w

    if task.spec.kernelbench is None:
        return False
    path = task.task_file
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    reason = degenerate_reason(check)
    if document.get("degenerate") == reason:
        return False
    if reason is None:
        document.pop("degenerate", None)
    else:
        document["degenerate"] = reason
    path.write_text(tomli_w.dumps(document), encoding="utf-8")
    return True
