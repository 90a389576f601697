"""Plan a grade's trials: inputs, expected outputs, and the calls to make.

A trial is one (dtype, shape) case. Its calls are the main call plus whatever
the contract's checks ask for (`CheckBase.extra_calls`: repeats on identical
inputs, runs on sub-batches), and, on the timed trial, timed calls on fresh
inputs of their own. Everything here runs on the trusted side.

Which trials are timed: on a GPU, one trial per benchmark shape of the task's
first dtype (realistic sizes; each still checked like any call); on CPU, the
first public trial (the interpreter is far too slow for benchmark shapes, and
its timings are only labelled `interpreted`). Timed calls of one job are
capped by bytes (`ROUND_BYTES_FRACTION` of the output limit), so a round of
benchmark-sized calls never trips the sandbox's limits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from gym.contracts import CheckBase, OracleCheck
from gym.contracts.spread import honest_evaluations, variant_count
from gym.grading.planning.seeds import GradeSeeds
from gym.tasks import hardened
from gym.tasks.inputs import generate_inputs
from gym.tasks.kernelbench import runtime as kernelbench
from gym.tasks.model import Shape, Task
from gym.tasks.references import oracle_outputs, reference_outputs, stage_outputs
from gym.worker.dtypes import dtype_from_name, dtype_name

CallRole = Literal["main", "repeat", "sub_batch", "timed", "warmup", "late"]


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
    # For timed and warm-up calls: the seed their inputs were generated from.
    seed: int | None = None
    # Warm-up calls of KernelBench tasks: ModelNew's constructor arguments (other calls take their trial's).
    init_inputs: str | None = None


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
    # KernelBench tasks: ModelNew's constructor arguments at this shape, as the worker receives them.
    init_inputs: str | None = None
    # Block tasks: the declared stage names, and the float64 stages on this trial's inputs (computed on demand).
    stage_names: list[str] = field(default_factory=list)
    stages: Callable[[], dict[str, torch.Tensor]] | None = None
    stage_rtol: float = 1e-3


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


def _honest_reference(task: Task, shape: Shape, inputs: dict[str, Any], start: int = 0, stop: int | None = None) -> list[list[torch.Tensor]]:
    """Honest float32 re-evaluations number `start` .. `stop - 1` of the reference on `inputs`
    (gym.contracts.spread; all of them without `stop`), fewer for large inputs."""

    def evaluate(args: dict[str, Any]) -> list[torch.Tensor]:
        return reference_outputs(task, args, shape)[0]

    elements = sum(value.numel() for value in inputs.values() if isinstance(value, torch.Tensor))
    count = variant_count(elements) if stop is None else min(stop, variant_count(elements))
    return honest_evaluations(evaluate, inputs, count=count, start=start)


def calibrated_checks(task: Task, shape: Shape, checks: list[CheckBase]) -> list[CheckBase]:
    """The checks with every `oracle` check's allowance calibrated on honest re-evaluations of the
    reference at this shape (OracleCheck.with_spread); other checks as they are."""
    honest = functools.partial(_honest_reference, task, shape)
    return [check.with_spread(honest) if isinstance(check, OracleCheck) else check for check in checks]


@dataclass(frozen=True)
class TrialRequest:
    """What make_trial builds one trial from."""

    # Shown in feedback, e.g. "float32 public #1".
    label: str
    # The trial's dtype.
    dtype: torch.dtype
    # The shape's parameters.
    shape: Shape
    # A hidden trial (a hidden or hardened shape: feedback never shows its shape).
    hidden: bool
    # The seed its inputs are generated from (gym.grading.planning.seeds.GradeSeeds).
    seed: int
    # The checks that apply to `dtype` (make_trial calibrates the oracle ones at `shape`).
    checks: list[CheckBase]
    # Inputs made elsewhere (a hardened trial's); None: generated from `seed`.
    inputs: dict[str, Any] | None = None


def make_trial(task: Task, request: TrialRequest, device: torch.device) -> Trial:
    """One trial: inputs from the request's seed (or its given inputs), the reference's outputs (and the oracle's when a check needs it)."""
    shape = request.shape
    inputs = request.inputs
    if inputs is None:
        inputs = generate_inputs(task, shape, request.dtype, request.seed, device)
    checks = calibrated_checks(task, shape, request.checks)
    expected, returns_tuple = reference_outputs(task, inputs, shape)
    return Trial(
        label=request.label,
        dtype=request.dtype,
        shape=shape,
        hidden=request.hidden,
        inputs=inputs,
        expected=expected,
        returns_tuple=returns_tuple,
        oracle=oracle_outputs(task, inputs, shape) if _needs_oracle(checks) else None,
        checks=checks,
        init_inputs=kernelbench.init_json(task, shape) if task.spec.kernelbench is not None else None,
        stage_names=list(task.spec.stage_names),
        stages=functools.partial(stage_outputs, task, inputs) if task.spec.stages else None,
        stage_rtol=task.spec.stage_rtol,
    )


def timed_call_seed(task: Task, trial: Trial, secret: int | None, rep: int) -> int:
    """The seed of the `rep`-th timed call's inputs on `trial`'s shape."""
    return GradeSeeds(task.id, secret).timed(dtype_name(trial.dtype), trial.label, rep)


def timed_inputs(task: Task, trial: Trial, seed: int, device: torch.device) -> dict[str, Any]:
    """A timed call's inputs, from its seed (the same bits every time)."""
    return generate_inputs(task, trial.shape, trial.dtype, seed, device)


def plan_timed_calls(task: Task, trial: Trial, device: torch.device, secret: int | None, reps: int, start: int = 0) -> list[CallPlan]:
    """`reps` calls on the trial's shape, each on freshly generated inputs with its own expected outputs
    (numbered from `start`, so later timing rounds never repeat an earlier round's inputs).

    Nothing can be cached across them (not by pointer, shape or content), and
    every one is checked like any other call.
    """
    plans = []
    for rep in range(start, start + reps):
        seed = timed_call_seed(task, trial, secret, rep)
        inputs = timed_inputs(task, trial, seed, device)
        expected, _ = reference_outputs(task, inputs, trial.shape)
        oracle = oracle_outputs(task, inputs, trial.shape) if trial.oracle is not None else None
        plans.append(CallPlan(role="timed", args=inputs, expected=expected, oracle=oracle, seed=seed))
    return plans


# The timed calls of one job may hold at most this fraction of the sandbox's output limit
# (inputs, outputs and oracle together), whatever the stopping rule asks for.
ROUND_BYTES_FRACTION = 0.5


def tensor_bytes(values: Any) -> int:
    """Bytes of every tensor in `values` (a dict's values, a list, or one tensor)."""
    items = values.values() if isinstance(values, dict) else values if isinstance(values, (list, tuple)) else [values]
    return sum(item.numel() * item.element_size() for item in items if isinstance(item, torch.Tensor))


def call_bytes(trial: Trial) -> int:
    """What one timed call on `trial`'s shape holds: its inputs, expected outputs and oracle."""
    return tensor_bytes(trial.inputs) + tensor_bytes(trial.expected) + tensor_bytes(trial.oracle or [])


def calls_that_fit(trial: Trial, wanted: int, budget_bytes: int) -> int:
    """At most `wanted` timed calls whose bytes fit in `budget_bytes` (never fewer than one, when any are wanted)."""
    if wanted <= 0:
        return 0
    return max(1, min(wanted, budget_bytes // max(1, call_bytes(trial))))


def plan_warmup_call(task: Task, trial: Trial, device: torch.device, secret: int | None) -> CallPlan:
    """Inputs of the timed shape used only to warm up (candidate and reference alike); never checked."""
    seed = GradeSeeds(task.id, secret).warmup(dtype_name(trial.dtype), trial.label)
    return CallPlan(role="warmup", args=generate_inputs(task, trial.shape, trial.dtype, seed, device), seed=seed, init_inputs=trial.init_inputs)


def hardened_trials(task: Task, trials: list[Trial], device: torch.device, secret: int | None) -> list[Trial]:
    """The grade's hardened trials (gym.tasks.hardened), on the first dtype's first hidden trial's
    shape (its first public one when it has none): one with heavy-tailed inputs and, for tasks
    with a Model's floating state, one with the weights re-initialised. Each is hidden and carries
    the same checks as the trial it derives from; one whose inputs no domain level holds for is left out."""
    base = next((trial for trial in trials if trial.hidden), trials[0] if trials else None)
    if base is None:
        return []
    variant = dtype_name(base.dtype)
    made = []
    for kind, derive in (("heavy-tailed", hardened.heavy_tailed_inputs), ("reinitialised", hardened.reinitialised_inputs)):
        seed = GradeSeeds(task.id, secret).trial(variant, kind, 0)
        # The inputs are chosen with the task's checks as declared (the honest spread is the allowance's, not the probe's).
        declared = [check for check in task.spec.contract if check.applies_to(base.dtype)]
        derived = derive(task, base.inputs, base.shape, seed, declared, base.expected)
        if derived is None:
            continue
        request = TrialRequest(f"{variant} {kind} #1", base.dtype, base.shape, hidden=True, seed=seed, checks=base.checks, inputs=derived.inputs)
        trial = make_trial(task, request, device)
        trial.calls = plan_calls(base.checks, trial.inputs)
        made.append(trial)
    return made


@dataclass(frozen=True)
class TimingRequest:
    """Which of a grade's trials carry timed calls, and how many (plan_trials)."""

    # Timed calls on each timed trial (0: none).
    reps: int = 0
    # One added timed trial per benchmark shape of the first dtype; else the first trial is the timed one.
    bench: bool = False
    # The bytes the timed trials' calls may hold together (fewer calls where they do not fit); None: no cap.
    round_bytes: int | None = None


def plan_trials(
    task: Task,
    device: torch.device,
    secret: int | None,
    include_hidden: bool = True,
    gpu: bool = False,
    timing: TimingRequest = TimingRequest(),
) -> list[Trial]:
    """Every (dtype, shape) trial of a grade, with inputs and expected outputs computed.

    With `timing.reps`, the timed trials carry that many timed calls each (see
    plan_timed_calls), fewer where `timing.round_bytes` (shared by the timed trials)
    cannot hold them: with `timing.bench`, one added trial per benchmark shape of the
    first dtype; otherwise the first trial. With `include_hidden`, the hardened trials
    (heavy-tailed inputs, re-initialised weights: see hardened_trials) follow the hidden ones.
    """
    timing_reps, bench, round_bytes = timing.reps, timing.bench, timing.round_bytes
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
                seed = GradeSeeds(task.id, secret).trial(variant, kind, index)
                trial = make_trial(
                    task, TrialRequest(f"{variant} {kind} #{index + 1}", dtype, shape, hidden=kind == "hidden", seed=seed, checks=checks), device
                )
                trial.calls = plan_calls(checks, trial.inputs)
                trials.append(trial)
    if include_hidden:
        trials.extend(hardened_trials(task, trials, device, secret))
    timed: list[Trial] = trials[:1]
    if bench and task.spec.shapes.bench and trials:
        first = trials[0]
        timed = []
        for index, shape in enumerate(task.spec.shapes.bench):
            seed = GradeSeeds(task.id, secret).bench(dtype_name(first.dtype), index)
            request = TrialRequest(f"{dtype_name(first.dtype)} bench #{index + 1}", first.dtype, shape, hidden=False, seed=seed, checks=first.checks)
            trial = make_trial(task, request, device)
            trial.calls = [CallPlan(role="main", args=trial.inputs)]
            trials.append(trial)
            timed.append(trial)
    if timing_reps > 0:
        share = (round_bytes // max(1, len(timed))) if round_bytes is not None else None
        for trial in timed:
            count = timing_reps if share is None else calls_that_fit(trial, timing_reps, share)
            trial.calls.extend(plan_timed_calls(task, trial, device, secret, count))
    return trials


# Late calls: the grade's cheapest trial (fewest input bytes, public or hidden) gets this many
# more calls (plus a secret 0..LATE_CALLS_SPREAD) on its own inputs, shuffled among the rest and
# each checked like the main call, so a kernel correct only for its first N calls (overall, or on
# that shape) is caught for any N up to LATE_CALLS_MIN. The cheapest trial keeps the cost down
# (about LATE_CALLS_MIN interpreted launches of the smallest shape per grade on CPU).
LATE_CALLS_MIN = 201
LATE_CALLS_SPREAD = 32


def add_late_calls(trials: list[Trial], secret: int | None) -> Trial | None:
    """Give the cheapest trial with a main call its late calls; returns it (None when there is none)."""
    pool = [trial for trial in trials if any(plan.role == "main" for plan in trial.calls) and "bench" not in trial.label]
    if not pool:
        return None
    trial = min(pool, key=lambda candidate: (tensor_bytes(candidate.inputs), candidate.label))
    count = LATE_CALLS_MIN + GradeSeeds("", secret).late_calls(trial.label).randint(0, LATE_CALLS_SPREAD)
    trial.calls.extend(CallPlan(role="late", args=trial.inputs) for _ in range(count))
    return trial


def timed_trials(trials: list[Trial]) -> list[Trial]:
    """The trials that carry timed calls, in order."""
    return [trial for trial in trials if any(plan.role == "timed" for plan in trial.calls)]


def timed_trial(trials: list[Trial]) -> Trial | None:
    """The first trial that carries timed calls, if any."""
    return next(iter(timed_trials(trials)), None)
