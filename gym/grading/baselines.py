"""Baseline timings and speedups, per timed shape: the reference (eager, and
under torch.compile on a GPU) timed with the worker's own timer and the
candidate's timing policy, then the speedups and the speed-of-light fraction
of each shape and their geometric means.

A baseline does not depend on the candidate, so it is measured once per
`gym.grading.baseline_cache.BaselineKey` (task and version, shape, dtype,
device model, torch/Triton versions, timing policy) and reused from the cache
by every later grade; `fresh=True` re-measures and overwrites it. A
measurement (`measure_baseline`) times the reference on inputs of its own,
generated from fresh seeds one call at a time exactly as timed inputs are
(never all alive at once), after the same warm-up by time, in rounds under
the same stopping rule as the candidate (on the reference's own samples).
Each shape's timings say where its baseline came from (`baseline`:
"measured" or "cached <date>")."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from gym.grading.baseline_cache import BaselineCache, BaselineEntry, baseline_key, now_iso
from gym.grading.seeds import GradeSeeds
from gym.grading.speed_of_light import bound_seconds
from gym.grading.statistics import summarize
from gym.grading.timing_policy import StopReason, TimingPolicy, next_round_size, stop_reason
from gym.grading.timing_rounds import ShapeRounds, TimingRounds
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


def measure_side(
    task: Task,
    label: str,
    dtype: str,
    shape: Shape,
    device: torch.device,
    policy: TimingPolicy,
    reference: Callable[..., Any],
    timer: CallTimer | None = None,
    secret: int | None = None,
) -> tuple[TimingSummary, StopReason]:
    """One side of a baseline (`reference`: eager or compiled), timed like the candidate: warmed up by time on
    inputs of its own, then `policy.min_reps` calls, each on freshly generated inputs, and further rounds
    (twice the samples so far) until the stopping rule holds on its own samples. Raises what the reference raises."""
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


def measure_baseline(
    task: Task,
    label: str,
    dtype: str,
    shape: Shape,
    device: torch.device,
    policy: TimingPolicy,
    *,
    compiled: bool,
    timer: CallTimer | None = None,
    origin: Literal["grade", "warm"] = "grade",
) -> Baseline:
    """Measure the eager reference (and, with `compiled`, the reference under torch.compile) at one shape.

    Raises what the eager reference raises (a CUDA OOM on a benchmark shape); a torch.compile
    failure is a note on the result instead, never a number."""
    secret = new_secret()
    key = baseline_key(task, dtype, shape, device, policy)
    eager, eager_stop = measure_side(task, label, dtype, shape, device, policy, reference_fn(task, shape), timer, secret)
    entry = BaselineEntry(key=key, measured_at="", origin=origin, eager=eager, eager_stop_reason=eager_stop.value)
    note = None
    if compiled:
        try:
            entry.compiled, compiled_stop = measure_side(task, label, dtype, shape, device, policy, compiled_reference(task, shape), timer, secret)
            entry.compiled_stop_reason = compiled_stop.value
        except Exception as error:  # noqa: BLE001 - a baseline that cannot be measured is reported, not guessed
            note = f"torch.compile failed: {_failure(error)}"
    entry.measured_at = now_iso()
    return Baseline(entry=entry, cached=False, compiled_note=note)


def reference_baseline(
    task: Task,
    label: str,
    dtype: str,
    shape: Shape,
    device: torch.device,
    policy: TimingPolicy,
    *,
    compiled: bool,
    timer: CallTimer | None = None,
    cache: BaselineCache | None = None,
    fresh: bool = False,
    origin: Literal["grade", "warm"] = "grade",
) -> Baseline:
    """The shape's baseline: reused from `cache` when it holds one for exactly this key (and not `fresh`),
    else measured now and stored there (overwriting any entry of the key). Without `cache` it is measured
    and not stored. A baseline with a torch.compile failure is not stored (the next grade tries again)."""
    if cache is not None and not fresh:
        entry = cache.load(baseline_key(task, dtype, shape, device, policy))
        if entry is not None and (entry.compiled is not None or not compiled):
            return Baseline(entry=entry, cached=True)
    measured = measure_baseline(task, label, dtype, shape, device, policy, compiled=compiled, timer=timer, origin=origin)
    if cache is not None and measured.compiled_note is None:
        cache.store(measured.entry, strict=origin == "warm")
    return measured


def geometric_mean(values: list[float | None]) -> float | None:
    """The geometric mean; None when any value is missing (a partial mean would mislead)."""
    if not values or any(value is None or value <= 0 for value in values):
        return None
    return math.exp(sum(math.log(value) for value in values if value is not None) / len(values))


def shape_timings(
    task: Task,
    shape: ShapeRounds,
    device: torch.device,
    device_name: str,
    policy: TimingPolicy,
    warmup_runs: int | None,
    compiled: bool,
    cache_bytes: int | None,
    timer: CallTimer | None = None,
    *,
    cache: BaselineCache | None = None,
    fresh: bool = False,
) -> ShapeTimings:
    """One shape's figures; a baseline that cannot be measured (an OOM, a compile failure) is a note, never a number.
    The baseline comes from `cache` when it holds this shape's (see reference_baseline)."""
    entry = ShapeTimings(trial=shape.trial.label, shape=dict(shape.trial.shape), stop_reason=shape.stop.value if shape.stop else None, rounds=shape.rounds)
    samples = [value for value in shape.samples if value >= 0]
    if not samples:
        return entry
    entry.candidate = TimingSummary(**summarize(samples), warmup_runs=warmup_runs)
    median = entry.candidate.median_s
    try:
        baseline = reference_baseline(
            task, shape.trial.label, dtype_name(shape.trial.dtype), shape.trial.shape, device, policy, compiled=compiled, timer=timer, cache=cache, fresh=fresh
        )
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


def build_timings(
    task: Task,
    rounds: TimingRounds,
    device: torch.device,
    policy: TimingPolicy,
    warmup_runs: int | None,
    cache_bytes: int | None = None,
    *,
    cache: BaselineCache | None = None,
    fresh: bool = False,
) -> Timings:
    """The grade's timings: every timed shape's candidate samples and baselines, the first shape's at the top level.

    Baselines are reused from `cache` when it holds them (the grade's `baseline` says so) and measured and
    stored otherwise; `fresh` re-measures them and overwrites the entries. Without `cache` they are measured
    and not stored. On CPU only the eager reference is timed (interpreted timings are never compared with
    compiled code)."""
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
    timer: CallTimer | None = None
    try:
        timer = CallTimer(device)
    except Exception:  # noqa: BLE001 - the flush buffer does not fit now; each shape tries again and says why
        timer = None
    for shape in rounds.shapes:
        timings.shapes.append(
            shape_timings(task, shape, device, device_name, policy, warmup_runs, not interpreted, cache_bytes, timer, cache=cache, fresh=fresh)
        )
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
