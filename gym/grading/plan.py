"""Plan a grade's trials: inputs, expected outputs, and the calls to make.

A trial is one (dtype, shape) case. Its calls are the main call plus whatever
the contract's checks ask for (`CheckBase.extra_calls`: repeats on identical
inputs, runs on sub-batches), and, on the timed trial, timed calls on fresh
inputs of their own. Everything here runs on the trusted side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from gym.contracts import CheckBase
from gym.tasks.inputs import generate_inputs, mix_seed, public_seed
from gym.tasks.model import Shape, Task
from gym.tasks.references import oracle_outputs, reference_outputs
from gym.worker.dtypes import dtype_from_name, dtype_name

CallRole = Literal["main", "repeat", "sub_batch", "timed", "warmup"]


@dataclass
class CallPlan:
    """One call of the candidate's kernel."""

    role: CallRole
    # Arguments by parameter name (tensors are cloned again by whoever runs the call).
    args: dict[str, Any]
    # For sub-batch calls: the [start, stop) rows of the full batch.
    span: tuple[int, int] | None = None
    # For timed calls: the reference (and oracle) outputs on this call's own inputs.
    expected: list[torch.Tensor] | None = None
    oracle: list[torch.Tensor] | None = None


@dataclass
class Trial:
    # Shown in feedback, e.g. "float32 public #1" or "float32 hidden #2".
    label: str
    dtype: torch.dtype
    shape: Shape
    hidden: bool
    inputs: dict[str, Any]
    expected: list[torch.Tensor]
    # True when the reference returns a tuple, False for a single tensor.
    returns_tuple: bool
    oracle: list[torch.Tensor] | None
    checks: list[CheckBase]
    calls: list[CallPlan] = field(default_factory=list)


def expected_for_call(trial: Trial, plan: CallPlan) -> list[torch.Tensor]:
    """What one call must return: its own expected outputs (timed), the trial's rows (sub-batch), or the trial's."""
    if plan.expected is not None:
        return plan.expected
    if plan.span is None:
        return trial.expected
    start, stop = plan.span
    return [e[start:stop] for e in trial.expected]


def plan_calls(checks: list[CheckBase], inputs: dict[str, Any]) -> list[CallPlan]:
    """The main call, then the checks' extra calls. Repeats on identical inputs are
    shared between checks (as many as the most demanding check asks for)."""
    asked = [check.extra_calls(inputs) for check in checks]
    repeats = max((sum(1 for call in calls if call.role == "repeat") for calls in asked), default=0)
    calls = [CallPlan(role="main", args=inputs)]
    calls += [CallPlan(role="repeat", args=inputs) for _ in range(repeats)]
    calls += [CallPlan(role=call.role, args=call.args, span=call.span) for extra in asked for call in extra if call.role != "repeat"]
    return calls


def _needs_oracle(checks: list[CheckBase]) -> bool:
    return any(check.needs_oracle for check in checks)


def make_trial(task: Task, label: str, dtype: torch.dtype, shape: Shape, hidden: bool, seed: int, device: torch.device, checks: list[CheckBase]) -> Trial:
    """One trial: inputs from `seed`, the reference's outputs (and the oracle's when a check needs it)."""
    inputs = generate_inputs(task, shape, dtype, seed, device)
    expected, returns_tuple = reference_outputs(task, inputs)
    return Trial(
        label=label,
        dtype=dtype,
        shape=shape,
        hidden=hidden,
        inputs=inputs,
        expected=expected,
        returns_tuple=returns_tuple,
        oracle=oracle_outputs(task, inputs) if _needs_oracle(checks) else None,
        checks=checks,
    )


def plan_timed_calls(task: Task, trial: Trial, device: torch.device, secret: int | None, reps: int, start: int = 0) -> list[CallPlan]:
    """`reps` calls on the trial's shape, each on freshly generated inputs with its own expected outputs
    (numbered from `start`, so later timing rounds never repeat an earlier round's inputs).

    Nothing can be cached across them (not by pointer, shape or content), and
    every one is checked like any other call.
    """
    plans = []
    for rep in range(start, start + reps):
        seed = mix_seed(public_seed(task.id, dtype_name(trial.dtype), f"timed-{trial.label}", rep), secret)
        inputs = generate_inputs(task, trial.shape, trial.dtype, seed, device)
        expected, _ = reference_outputs(task, inputs)
        oracle = oracle_outputs(task, inputs) if trial.oracle is not None else None
        plans.append(CallPlan(role="timed", args=inputs, expected=expected, oracle=oracle))
    return plans


def plan_warmup_call(task: Task, trial: Trial, device: torch.device, secret: int | None) -> CallPlan:
    """Inputs of the timed shape used only to warm up (candidate and reference alike); never checked."""
    seed = mix_seed(public_seed(task.id, dtype_name(trial.dtype), f"warmup-{trial.label}", 0), secret)
    return CallPlan(role="warmup", args=generate_inputs(task, trial.shape, trial.dtype, seed, device))


def plan_trials(
    task: Task,
    device: torch.device,
    secret: int | None,
    include_hidden: bool = True,
    gpu: bool = False,
    timing_reps: int = 0,
    bench: bool = False,
) -> list[Trial]:
    """Every (dtype, shape) trial of a grade, with inputs and expected outputs computed.

    The first trial also carries `timing_reps` timed calls (see plan_timed_calls);
    with `bench`, a trial on the task's first benchmark shape is added and carries
    them instead (for GPUs: the interpreter is far too slow for benchmark shapes).
    """
    dtype_names = list(task.spec.dtypes) + (list(task.spec.gpu_only_dtypes) if gpu else [])
    shape_sets: list[tuple[str, list[Shape]]] = [("public", task.spec.shapes.public)]
    if include_hidden:
        shape_sets.append(("hidden", task.spec.shapes.hidden))
    trials: list[Trial] = []
    for variant in dtype_names:
        dtype = dtype_from_name(variant)
        checks = [check for check in task.spec.contract if check.applies_to(dtype)]
        for kind, shapes in shape_sets:
            for index, shape in enumerate(shapes):
                seed = mix_seed(public_seed(task.id, variant, kind, index), secret)
                trial = make_trial(task, f"{variant} {kind} #{index + 1}", dtype, shape, kind == "hidden", seed, device, checks)
                trial.calls = plan_calls(checks, trial.inputs)
                trials.append(trial)
    if bench and task.spec.shapes.bench and trials:
        first = trials[0]
        seed = mix_seed(public_seed(task.id, dtype_name(first.dtype), "bench", 0), secret)
        trial = make_trial(task, f"{dtype_name(first.dtype)} bench #1", first.dtype, task.spec.shapes.bench[0], False, seed, device, first.checks)
        trial.calls = [CallPlan(role="main", args=trial.inputs)]
        trials.append(trial)
    if trials and timing_reps > 0:
        timed = trials[-1] if bench and task.spec.shapes.bench else trials[0]
        timed.calls.extend(plan_timed_calls(task, timed, device, secret, timing_reps))
    return trials


def timed_trial(trials: list[Trial]) -> Trial | None:
    """The trial that carries the timed calls, if any."""
    return next((trial for trial in trials if any(plan.role == "timed" for plan in trial.calls)), None)
