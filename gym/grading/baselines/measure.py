"""Baseline timings and speedups, per timed shape: the reference (eager, and
under torch.compile on a GPU) timed with the worker's own timer and the
candidate's timing policy, then the speedups and the speed-of-light fraction
of each shape and their geometric means.

A baseline does not depend on the candidate, so it is measured once per
`gym.grading.baselines.cache.BaselineKey` (task and version, shape, dtype,
device model, torch/Triton versions, timing policy) and reused from the cache
by every later grade; `BaselineSetting.fresh` re-measures and overwrites it. A
measurement (`measure_baseline`) times the reference on inputs of its own,
generated from fresh seeds one call at a time exactly as timed inputs are
(never all alive at once), after the same warm-up by time, in rounds under
the same stopping rule as the candidate (on the reference's own samples).
Each shape's timings say where its baseline came from (`baseline`:
"measured" or "cached <date>")."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from gym.grading.baselines.cache import BaselineCache, BaselineEntry, baseline_key, now_iso
from gym.grading.planning.seeds import GradeSeeds
from gym.grading.timing.speed_of_light import bound_seconds
from gym.grading.timing.statistics import summarize
from gym.grading.timing.timing_policy import StopReason, TimingPolicy, next_round_size, stop_reason
from gym.grading.timing.timing_rounds import ShapeRounds, TimingRounds
from gym.schema.result import ShapeTimings, Timings, TimingSummary
from gym.tasks.inputs import generate_inputs, new_secret
from gym.tasks.model import Shape, Task
from gym.tasks.references import call_args, clone_args, reference_fn
from gym.worker.dtypes import dtype_from_name, dtype_name
from gym.worker.timer import CallTimer, synchronize, time_each, warm_up


def compiled_reference(task: Task, shape: Shape) -> Callable[..., Any]:
    """The reference under torch.compile with static shapes: a figure never depends on the
    shapes this process compiled before (dynamic=None would turn dynamic after two)."""
    return torch.compile(reference_fn(task, shape), dynamic=False)


def baseline_seed(task: Task, dtype: str, label: str, rep: int, secret: int) -> int:
    """The seed of a baseline's `rep`-th timed call: derived as a grade's timed calls are (plan.timed_call_seed), fresh `secret`."""
    return GradeSeeds(task.id, secret).timed(dtype, label, rep)


def baseline_warmup_seed(task: Task, dtype: str, label: str, secret: int) -> int:
    """The seed of a baseline's warm-up inputs: derived as a grade's are (plan.plan_warmup_call), fresh `secret`."""
    return GradeSeeds(task.id, secret).warmup(dtype, label)


@dataclass(frozen=True)
class BaselineSetting:
    """What every baseline of one task on one device shares: how it is timed, and where it is kept."""

    # The task whose reference is timed.
    task: Task
    # The device the reference runs on.
    device: torch.device
    # Warm-up and stopping rule (the candidate's; part of the cache key).
    policy: TimingPolicy
    # The timer every call is timed with; None: each round of calls makes its own (build_timings makes one for all its shapes).
    timer: CallTimer | None = None
    # Where baselines are reused from and stored; None: measured and not stored.
    cache: BaselineCache | None = None
    # Re-measure even when `cache` holds the baseline, and overwrite its entry.
    fresh: bool = False
    # Who measured it, as the stored entry records it: a grade, or `kgym baselines warm` (whose cache writes must succeed).
    origin: Literal["grade", "warm"] = "grade"


@dataclass(frozen=True)
class BaselinePoint:
    """One timed shape a baseline is of, named as the grade's trial is."""

    # The trial label, e.g. "float32 bench #1" (the baseline's seeds derive from it, as the grade's timed calls' do).
    label: str
    # The dtype's name, e.g. "float32".
    dtype: str
    # The shape's parameters.
    shape: Shape


def measure_side(setting: BaselineSetting, point: BaselinePoint, reference: Callable[..., Any], secret: int | None = None) -> tuple[TimingSummary, StopReason]:
    """One side of a baseline (`reference`: eager or compiled), timed like the candidate: warmed up by time on
    inputs of its own, then `setting.policy.min_reps` calls, each on freshly generated inputs, and further rounds
    (twice the samples so far) until the stopping rule holds on its own samples. Raises what the reference raises."""
    task, device, policy, timer = setting.task, setting.device, setting.policy, setting.timer
    label, dtype, shape = point.label, point.dtype, point.shape
    secret = new_secret() if secret is None else secret
    torch_dtype = dtype_from_name(dtype)
    params = task.spec.params
    warmup_args = generate_inputs(task, shape, torch_dtype, baseline_warmup_seed(task, dtype, label, secret), device)

    def step() -> bool:
        reference(*call_args(clone_args(warmup_args), params))
        synchronize(device)
        return True

    runs = warm_up(step, policy.warmup_s)
    warmup_args.clear()  # only one call's inputs alive while timing
    samples: list[float] = []

    def timed_round(count: int) -> float:
        """Time `count` more calls, each on inputs generated just before it (rep numbers go on); returns its seconds."""
        start, started = len(samples), time.monotonic()
        argsets = (generate_inputs(task, shape, torch_dtype, baseline_seed(task, dtype, label, rep, secret), device) for rep in range(start, start + count))
        samples.extend(time_each(lambda args: reference(*call_args(args, params)), argsets, device, timer))
        return time.monotonic() - started

    # The same decisions as timing_rounds.run_rounds: the first round's cost (after the warm-up) estimates the next one's.
    last_cost, spent = timed_round(policy.min_reps), 0.0
    while (stop := stop_reason(samples, policy, spent, last_cost)) is None:
        last_cost = timed_round(next_round_size(len(samples), policy))
        spent += last_cost
    return TimingSummary(**summarize(samples), warmup_runs=runs), stop


def _failure(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[:300]}"


@dataclass
class Baseline:
    """A shape's baseline figures and where they came from."""

    # The figures (measured now, or read from the cache).
    entry: BaselineEntry
    # True when `entry` was reused from the cache.
    cached: bool
    # Why there is no torch.compile figure where one was asked for (a compile failure); such a baseline is not cached.
    compiled_note: str | None = None

    @property
    def source(self) -> str:
        """`measured`, or `cached <the ISO-8601 UTC time it was measured>`."""
        return f"cached {self.entry.measured_at}" if self.cached else "measured"


def measure_baseline(setting: BaselineSetting, point: BaselinePoint, *, compiled: bool) -> Baseline:
    """Measure the eager reference (and, with `compiled`, the reference under torch.compile) at one shape
    (`setting.cache` and `setting.fresh` play no part: see reference_baseline).

    Raises what the eager reference raises (a CUDA OOM on a benchmark shape); a torch.compile
    failure is a note on the result instead, never a number."""
    task, shape = setting.task, point.shape
    secret = new_secret()
    key = baseline_key(task, point.dtype, shape, setting.device, setting.policy)
    eager, eager_stop = measure_side(setting, point, reference_fn(task, shape), secret)
    entry = BaselineEntry(key=key, measured_at="", origin=setting.origin, eager=eager, eager_stop_reason=eager_stop.value)
    note = None
    if compiled:
        try:
            entry.compiled, compiled_stop = measure_side(setting, point, compiled_reference(task, shape), secret)
            entry.compiled_stop_reason = compiled_stop.value
        except Exception as error:  # noqa: BLE001 - a baseline that cannot be measured is reported, not guessed
            note = f"torch.compile failed: {_failure(error)}"
    entry.measured_at = now_iso()
    return Baseline(entry=entry, cached=False, compiled_note=note)


def reference_baseline(setting: BaselineSetting, point: BaselinePoint, *, compiled: bool) -> Baseline:
    """The shape's baseline: reused from `setting.cache` when it holds one for exactly this key (and not
    `setting.fresh`), else measured now and stored there (overwriting any entry of the key). Without a cache it
    is measured and not stored. A baseline with a torch.compile failure is not stored (the next grade tries again)."""
    cache = setting.cache
    if cache is not None and not setting.fresh:
        entry = cache.load(baseline_key(setting.task, point.dtype, point.shape, setting.device, setting.policy))
        if entry is not None and (entry.compiled is not None or not compiled):
            return Baseline(entry=entry, cached=True)
    measured = measure_baseline(setting, point, compiled=compiled)
    if cache is not None and measured.compiled_note is None:
        cache.store(measured.entry, strict=setting.origin == "warm")
    return measured


def geometric_mean(values: list[float | None]) -> float | None:
    """The geometric mean; None when any value is missing (a partial mean would mislead)."""
    if not values or any(value is None or value <= 0 for value in values):
        return None
    return math.exp(sum(math.log(value) for value in values if value is not None) / len(values))


def shape_timings(
    setting: BaselineSetting, shape: ShapeRounds, device_name: str, warmup_runs: int | None, compiled: bool, cache_bytes: int | None
) -> ShapeTimings:
    """One shape's figures; a baseline that cannot be measured (an OOM, a compile failure) is a note, never a number.
    The baseline comes from `setting.cache` when it holds this shape's (see reference_baseline)."""
    task, device = setting.task, setting.device
    entry = ShapeTimings(trial=shape.trial.label, shape=dict(shape.trial.shape), stop_reason=shape.stop.value if shape.stop else None, rounds=shape.rounds)
    samples = [value for value in shape.samples if value >= 0]
    if not samples:
        return entry
    entry.candidate = TimingSummary(**summarize(samples), warmup_runs=warmup_runs)
    median = entry.candidate.median_s
    try:
        point = BaselinePoint(label=shape.trial.label, dtype=dtype_name(shape.trial.dtype), shape=shape.trial.shape)
        baseline = reference_baseline(setting, point, compiled=compiled)
    except Exception as error:  # noqa: BLE001 - e.g. a CUDA OOM on a benchmark shape: reported, not raised
        entry.compiled_note = f"the eager reference could not be timed: {_failure(error)}"
        return entry
    entry.reference, entry.compiled, entry.baseline = baseline.entry.eager, baseline.entry.compiled, baseline.source
    entry.compiled_note = baseline.compiled_note
    if median > 0:
        entry.speedup_vs_eager = entry.reference.median_s / median
        entry.speedup_vs_compile = entry.compiled.median_s / median if entry.compiled else None
        if device.type == "cuda":
            bound = bound_seconds(task, shape.trial.shape, shape.trial.dtype, device_name, cache_bytes)
            entry.sol_fraction = bound / median if bound is not None else None
    return entry


def baseline_summary(shapes: list[ShapeTimings]) -> str | None:
    """The grade's `baseline`: "measured", "cached <oldest date>", or both with counts; None when no shape has one."""
    sources = [entry.baseline for entry in shapes if entry.baseline is not None]
    cached = sorted(source.removeprefix("cached ") for source in sources if source.startswith("cached "))
    if not sources:
        return None
    if not cached:
        return "measured"
    if len(cached) == len(sources):
        return f"cached {cached[0]}"
    return f"cached {cached[0]} ({len(cached)} of {len(sources)} shapes; the rest measured)"


def build_timings(setting: BaselineSetting, rounds: TimingRounds, warmup_runs: int | None, cache_bytes: int | None = None) -> Timings:
    """The grade's timings: every timed shape's candidate samples and baselines, the first shape's at the top level.

    Baselines are reused from `setting.cache` when it holds them (the grade's `baseline` says so) and measured and
    stored otherwise; `setting.fresh` re-measures them and overwrites the entries. Without a cache they are measured
    and not stored. Without `setting.timer` one timer is made for every shape. On CPU only the eager reference is
    timed (interpreted timings are never compared with compiled code)."""
    device, policy = setting.device, setting.policy
    interpreted = device.type == "cpu"
    device_name = "cpu" if interpreted else torch.cuda.get_device_name(device)
    first = rounds.shapes[0]
    timings = Timings(
        device=device_name,
        interpreted=interpreted,
        trial=first.trial.label,
        target_rse=policy.target_rse,
        stop_reason=first.stop.value if first.stop else None,
        rounds=rounds.rounds,
    )
    timer: CallTimer | None = setting.timer
    if timer is None:
        try:
            timer = CallTimer(device)
        except Exception:  # noqa: BLE001 - the flush buffer does not fit now; each shape tries again and says why
            timer = None
    timed = dataclasses.replace(setting, timer=timer)
    for shape in rounds.shapes:
        timings.shapes.append(shape_timings(timed, shape, device_name, warmup_runs, not interpreted, cache_bytes))
    head = timings.shapes[0]
    timings.candidate, timings.reference, timings.compiled = head.candidate, head.reference, head.compiled
    timings.baseline = baseline_summary(timings.shapes)
    if head.candidate is None:
        timings.note = timings.note or "the candidate was not timed"
    if interpreted:
        timings.compiled_note = "not measured on CPU: interpreted timings are never compared with compiled code"
    else:
        timings.compiled_note = next((entry.compiled_note for entry in timings.shapes if entry.compiled_note), None)
    return timings
