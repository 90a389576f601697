"""Plan a grade's trials (inputs, expected outputs, the calls to make) and judge them.

A trial is one (dtype, shape) case. Its calls are the main call plus whatever
the contract needs: repeats on identical inputs (`deterministic`) and runs on
sub-batches (`batch_invariant`). Everything here runs on the trusted side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from gym.contracts import (
    BatchInvariantCheck,
    CheckBase,
    CheckOutcome,
    DeterministicCheck,
    OracleCheck,
    SubBatchRun,
    TrialEvidence,
)
from gym.dtypes import dtype_from_name, dtype_name
from gym.inputs import generate_inputs, mix_seed, public_seed
from gym.references import oracle_fn, reference_fn
from gym.task_model import Shape, Task

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


def as_output_list(value: Any) -> tuple[list[torch.Tensor], bool]:
    """A reference's return value as a list of tensors, and whether it was a tuple."""
    if isinstance(value, torch.Tensor):
        return [value], False
    if isinstance(value, tuple) and all(isinstance(item, torch.Tensor) for item in value):
        return list(value), True
    raise TypeError(f"a reference must return a tensor or a tuple of tensors, not {type(value).__name__}")


def clone_args(args: dict[str, Any]) -> dict[str, Any]:
    return {name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in args.items()}


def call_args(args: dict[str, Any], params: list[str]) -> list[Any]:
    return [args[name] for name in params]


def _oracle_outputs(task: Task, inputs: dict[str, Any]) -> list[torch.Tensor]:
    """Float64 oracle outputs: the task's oracle, or the reference run on float64 inputs."""
    oracle = oracle_fn(task) or reference_fn(task)
    upcast = {
        name: value.to(torch.float64) if isinstance(value, torch.Tensor) and value.dtype.is_floating_point else value
        for name, value in clone_args(inputs).items()
    }
    outputs, _ = as_output_list(oracle(*call_args(upcast, task.spec.params)))
    return outputs


def _slice_args(args: dict[str, Any], names: list[str], start: int, stop: int) -> dict[str, Any]:
    return {name: value[start:stop].clone() if name in names else value for name, value in args.items()}


def plan_calls(checks: list[CheckBase], inputs: dict[str, Any]) -> list[CallPlan]:
    calls = [CallPlan(role="main", args=inputs)]
    runs = max((check.runs for check in checks if isinstance(check, DeterministicCheck)), default=1)
    calls += [CallPlan(role="repeat", args=inputs) for _ in range(runs - 1)]
    for check in checks:
        if isinstance(check, BatchInvariantCheck):
            batch = min(int(inputs[name].shape[0]) for name in check.args)
            for start, stop in check.resolve(batch):
                calls.append(CallPlan(role="sub_batch", args=_slice_args(inputs, check.args, start, stop), span=(start, stop)))
    return calls


def plan_timed_calls(task: Task, trial: Trial, device: torch.device, secret: int | None, reps: int, start: int = 0) -> list[CallPlan]:
    """`reps` calls on the trial's shape, each on freshly generated inputs with its own expected outputs
    (numbered from `start`, so later timing rounds never repeat an earlier round's inputs).

    Nothing can be cached across them (not by pointer, shape or content), and
    every one is checked like any other call.
    """
    reference = reference_fn(task)
    plans = []
    for rep in range(start, start + reps):
        seed = mix_seed(public_seed(task.id, dtype_name(trial.dtype), f"timed-{trial.label}", rep), secret)
        inputs = generate_inputs(task, trial.shape, trial.dtype, seed, device)
        expected, _ = as_output_list(reference(*call_args(clone_args(inputs), task.spec.params)))
        oracle = _oracle_outputs(task, inputs) if trial.oracle is not None else None
        plans.append(CallPlan(role="timed", args=inputs, expected=[e.detach() for e in expected], oracle=oracle))
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
    reference = reference_fn(task)
    trials: list[Trial] = []
    for variant in dtype_names:
        dtype = dtype_from_name(variant)
        checks = [check for check in task.spec.contract if check.applies_to(dtype)]
        for kind, shapes in shape_sets:
            for index, shape in enumerate(shapes):
                seed = mix_seed(public_seed(task.id, variant, kind, index), secret)
                inputs = generate_inputs(task, shape, dtype, seed, device)
                expected, returns_tuple = as_output_list(reference(*call_args(clone_args(inputs), task.spec.params)))
                needs_oracle = any(isinstance(check, OracleCheck) for check in checks)
                trials.append(
                    Trial(
                        label=f"{variant} {kind} #{index + 1}",
                        dtype=dtype,
                        shape=shape,
                        hidden=kind == "hidden",
                        inputs=inputs,
                        expected=[e.detach() for e in expected],
                        returns_tuple=returns_tuple,
                        oracle=_oracle_outputs(task, inputs) if needs_oracle else None,
                        checks=checks,
                        calls=plan_calls(checks, inputs),
                    )
                )
    if bench and task.spec.shapes.bench and trials:
        first = trials[0]
        shape = task.spec.shapes.bench[0]
        seed = mix_seed(public_seed(task.id, dtype_name(first.dtype), "bench", 0), secret)
        inputs = generate_inputs(task, shape, first.dtype, seed, device)
        expected, returns_tuple = as_output_list(reference(*call_args(clone_args(inputs), task.spec.params)))
        trials.append(
            Trial(
                label=f"{dtype_name(first.dtype)} bench #1", dtype=first.dtype, shape=shape, hidden=False,
                inputs=inputs, expected=[e.detach() for e in expected], returns_tuple=returns_tuple,
                oracle=_oracle_outputs(task, inputs) if first.oracle is not None else None,
                checks=first.checks, calls=[CallPlan(role="main", args=inputs)],
            )
        )
    if trials and timing_reps > 0:
        timed = trials[-1] if bench and task.spec.shapes.bench else trials[0]
        timed.calls.extend(plan_timed_calls(task, timed, device, secret, timing_reps))
    return trials


def timed_trial(trials: list[Trial]) -> Trial | None:
    """The trial that carries the timed calls, if any."""
    return next((trial for trial in trials if any(plan.role == "timed" for plan in trial.calls)), None)


def judge_timed(trial: Trial, plan: CallPlan, outputs: list[torch.Tensor]) -> list[CheckOutcome]:
    """The contract's value checks on one timed call, against that call's own expected outputs."""
    assert plan.expected is not None
    evidence = TrialEvidence(outputs=outputs, expected=plan.expected, inputs=plan.args, oracle=plan.oracle)
    return [check.compare(outputs, evidence) for check in trial.checks if check.compares_values]


def judge_trial(trial: Trial, outputs: list[list[torch.Tensor]]) -> list[CheckOutcome]:
    """Run the trial's checks on the outputs of its non-timed calls (same order as `trial.calls`)."""
    main = outputs[0]
    evidence = TrialEvidence(
        outputs=main,
        expected=trial.expected,
        inputs=trial.inputs,
        oracle=trial.oracle,
        repeats=[out for plan, out in zip(trial.calls, outputs) if plan.role == "repeat"],
        sub_batches=[
            SubBatchRun(start=plan.span[0], stop=plan.span[1], outputs=out)
            for plan, out in zip(trial.calls, outputs)
            if plan.role == "sub_batch" and plan.span is not None
        ],
        value_checks=[check for check in trial.checks if check.compares_values],
    )
    return [check.evaluate(evidence) for check in trial.checks]
