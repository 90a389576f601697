"""Modelled speed: a roofline bound from counted traffic on a named GPU profile, never a timing.

The witness counts what one call's kernels move and compute (gym.worker.traffic), in an
interpreted replay of the kernels alone on fresh inputs; nothing the submission's process
reports is used. From those counts and a profile of gym/grading/gpu_profiles.toml:

    launch time   = max(bytes / bandwidth, FLOPs / peak) + launch overhead
    (at the task's first benchmark shape: each launch's and each op's counted bytes scaled by the
    task's minimum bytes there over the counted shape's, so the traffic ratio is kept; the
    candidate's FLOPs become the task's minimum there, spread over its launches as counted, since
    FLOPs past the minimum at a small shape are mostly masked tile padding; the reference's ops'
    FLOPs scale by the minimum FLOPs' ratio; launches stay as counted)
    candidate     = Σ over its launches                       (Triton launches only)
    eager         = Σ over the aten ops the reference runs     (each reads its tensor inputs and
                                                                writes its outputs; views are free)
    torch.compile = one launch moving the task's minimum bytes and doing its minimum FLOPs

`peak` is the fastest rate the trial's dtype can reach (float32 may use TF32 tensor cores, as
the speed-of-light check assumes). What the model ignores: caches (a re-read of a tile costs
DRAM bandwidth again), coalescing beyond one instruction, occupancy, bank conflicts, tail
effects and the latency of a small launch beyond the fixed overhead. It is a direction an agent
can follow on a CPU (fewer bytes, fewer launches), not a prediction of a GPU's time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gym.errors import UnknownProfile
from gym.grading.speed_of_light import DEVICES, DevicePeak, fastest_flops, minimum_cost
from gym.schema.signal import BufferTraffic, LaunchTraffic, ModelledSpeed, Traffic
from gym.tasks.model import Shape, Task
from gym.tasks.references import call_args, clone_args, reference_fn
from gym.worker.traffic import TrafficCounts, op_cost

# The profile a grade is modelled on unless asked otherwise.
DEFAULT_PROFILE = "H100 SXM"
# Short names accepted for the profiles the docs name (any profile of the file is accepted by its name).
ALIASES = {"h100": "H100 SXM", "a100": "A100 80GB", "l4": "L4", "mi300x": "MI300X", "h200": "H200", "b200": "B200"}


def profile_named(name: str) -> tuple[str, DevicePeak]:
    """(canonical name, peaks) of a profile, by its name in the file or a short alias ("a100")."""
    wanted = ALIASES.get(name.strip().lower(), name.strip())
    for known, peak in DEVICES.items():
        if known.lower() == wanted.lower():
            return known, peak
    raise UnknownProfile(f"unknown GPU profile {name!r}; known: {', '.join(DEVICES)} (or {', '.join(ALIASES)})")


@dataclass(frozen=True)
class OpCost:
    """One aten op of the reference: its bytes moved and FLOPs (eager runs each as a kernel)."""

    op: str
    bytes: int
    flops: int


class _CostMode(TorchDispatchMode):
    """Records every aten op with a tensor result that is not a view (`op_cost`)."""

    def __init__(self) -> None:
        super().__init__()
        self.costs: list[OpCost] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        moved = op_cost(func, args, kwargs, out)
        if moved is not None:
            self.costs.append(OpCost(op=str(func._overloadpacket), bytes=moved[0] + moved[1], flops=moved[2]))
        return out


def reference_costs(task: Task, inputs: dict[str, Any], shape: Shape) -> list[OpCost]:
    """The aten ops one call of the reference runs on `inputs`, with their bytes and FLOPs."""
    reference = reference_fn(task, shape)
    arguments = call_args(clone_args(inputs), task.spec.params)
    mode = _CostMode()
    with torch.no_grad(), mode:
        reference(*arguments)
    return mode.costs


def launch_seconds(bytes_moved: float, flops: float, peak: DevicePeak, dtype: torch.dtype) -> float:
    """One launch's modelled seconds: the roofline bound plus the profile's launch overhead."""
    return max(bytes_moved / peak.bandwidth, flops / fastest_flops(peak, dtype)) + peak.launch_overhead_s


def traffic_summary(task: Task, label: str, shape: Shape, dtype: torch.dtype, counts: TrafficCounts) -> Traffic:
    """The grade's `traffic` from the witness's counts, beside the task's minimum bytes and FLOPs."""
    min_bytes, min_flops = minimum_cost(task, shape, dtype)
    moved = counts.bytes_read + counts.bytes_written
    return Traffic(
        trial=label,
        shape=dict(shape),
        dtype=str(dtype).removeprefix("torch."),
        bytes_read=counts.bytes_read,
        bytes_written=counts.bytes_written,
        flops=counts.flops,
        launches=counts.launch_total,
        programs=counts.programs,
        torch_ops=counts.torch_ops,
        min_bytes=min_bytes or None,
        min_flops=min_flops or None,
        traffic_ratio=moved / min_bytes if min_bytes > 0 else None,
        per_launch=[
            LaunchTraffic(
                kernel=row.kernel, torch_op=row.torch_op, programs=row.programs, bytes_read=row.bytes_read, bytes_written=row.bytes_written, flops=row.flops
            )
            for row in counts.launches
        ],
        buffers=[
            BufferTraffic(
                name=row.name,
                bytes=row.bytes,
                bytes_read=row.bytes_read,
                bytes_written=row.bytes_written,
                times_read=row.bytes_read / row.bytes if row.bytes else 0.0,
                times_written=row.bytes_written / row.bytes if row.bytes else 0.0,
            )
            for row in counts.buffers
        ],
    )


def modelled_shape(task: Task, counted: Shape, dtype: torch.dtype) -> tuple[Shape, float, float]:
    """The shape a grade is modelled at (the task's first benchmark shape; the counted one when it
    has none or no minimum there) and the factors its bytes and FLOPs scale by from the counted shape."""
    if not task.spec.shapes.bench:
        return counted, 1.0, 1.0
    target = task.spec.shapes.bench[0]
    bytes_here, flops_here = minimum_cost(task, counted, dtype)
    bytes_there, flops_there = minimum_cost(task, target, dtype)
    if bytes_here <= 0 or bytes_there <= 0:
        return counted, 1.0, 1.0
    byte_scale = bytes_there / bytes_here
    flop_scale = flops_there / flops_here if flops_here > 0 and flops_there > 0 else byte_scale
    return target, byte_scale, flop_scale


def modelled_speed(
    task: Task, counts: TrafficCounts, traffic: Traffic, reference: list[OpCost] | None, dtype: torch.dtype, profile: str = DEFAULT_PROFILE
) -> ModelledSpeed:
    """Candidate, eager and torch.compile modelled on `profile` at `modelled_shape` (see the module docstring)."""
    name, peak = profile_named(profile)
    shape, byte_scale, flop_scale = modelled_shape(task, traffic.shape, dtype)

    rows = counts.launches  # Triton launches and the torch ops beside them, each a launch of its own
    counted_flops = counts.flops + sum(row.flops for row in rows if row.torch_op)
    target_flops = minimum_cost(task, shape, dtype)[1]
    # Scaled to another shape, the candidate does the task's minimum FLOPs there: FLOPs past the
    # minimum at a small counted shape are mostly masked tile padding, which a benchmark shape lacks.
    own_scale = target_flops / counted_flops if shape != traffic.shape and counted_flops > 0 and target_flops > 0 else flop_scale

    def seconds(bytes_moved: float, flops: float, scale: float = flop_scale) -> float:
        return launch_seconds(bytes_moved * byte_scale, flops * scale, peak, dtype)

    candidate = sum(seconds(row.bytes_read + row.bytes_written, row.flops, own_scale) for row in rows)
    kernels = [row for row in rows if not row.torch_op]
    # Launches past the reported rows (MAX_LAUNCH_ROWS) are modelled as the rest of the totals, spread evenly.
    missing = counts.launch_total - len(kernels)
    if missing > 0:
        rest_bytes = counts.bytes_read + counts.bytes_written - sum(row.bytes_read + row.bytes_written for row in kernels)
        rest_flops = counts.flops - sum(row.flops for row in kernels)
        candidate += missing * seconds(rest_bytes / missing, rest_flops / missing, own_scale)
    overhead = (counts.launch_total + sum(1 for row in rows if row.torch_op)) * peak.launch_overhead_s
    memory_s = (
        (counts.bytes_read + counts.bytes_written + sum(row.bytes_read + row.bytes_written for row in rows if row.torch_op)) * byte_scale / peak.bandwidth
    )
    compute_s = counted_flops * own_scale / fastest_flops(peak, dtype)
    bound = max((("launch", overhead), ("memory", memory_s), ("compute", compute_s)), key=lambda pair: pair[1])[0]
    eager = sum(seconds(op.bytes, op.flops) for op in reference) if reference else None
    compile_s = seconds(traffic.min_bytes or 0.0, traffic.min_flops or 0.0) if traffic.min_bytes else None
    return ModelledSpeed(
        profile=name,
        label=f"modelled on {name}, not measured",
        shape=dict(shape),
        candidate_s=candidate,
        eager_s=eager,
        compile_s=compile_s,
        speedup_vs_eager=eager / candidate if eager is not None and candidate > 0 else None,
        speedup_vs_compile=compile_s / candidate if compile_s is not None and candidate > 0 else None,
        launch_overhead_share=overhead / candidate if candidate > 0 else 0.0,
        bound=bound,
    )
