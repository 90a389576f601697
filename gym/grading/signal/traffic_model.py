"""Modelled speed: a roofline bound from counted traffic on a named GPU profile, never a timing.

The witness counts what one call's kernels move and compute (gym.worker.traffic), in an
interpreted replay of the kernels alone on fresh inputs; nothing the submission's process
reports is used. From those counts and a profile of gym/grading/timing/gpu_profiles.toml:

    launch time   = max(bytes / bandwidth, compute) + launch overhead
    compute       = dot FLOPs / peak + (other FLOPs + (SPECIAL_FLOPS - 1) x special lanes) / vector peak
    (at the task's first benchmark shape: each launch's and each op's counted bytes scaled by the
    task's minimum bytes there over the counted shape's, so the traffic ratio is kept; dot FLOPs
    (and a reference op's matmul / convolution FLOPs) by the task's minimum FLOPs' ratio, other
    FLOPs by the smaller of the two ratios (elementwise work grows with the data, not with a
    matmul's K), so excess work is kept in proportion as excess bytes are; launches stay as counted.
    A count made at a hidden shape is modelled at the first benchmark shape, else the first public
    one, and never reported at its own shape)
    candidate     = Σ over its launches                       (Triton launches only)
    eager         = Σ over the aten ops the reference runs     (each reads its tensor inputs and
                                                                writes its outputs; views are free)
    torch.compile = one launch moving the task's minimum bytes and doing its minimum FLOPs

`peak` is the fastest rate the trial's dtype can reach (float32 may use TF32 tensor cores, as
the speed-of-light check assumes): only `tl.dot` runs there. Every other FLOP runs at the
profile's float32 (CUDA-core) rate, and a special function (exp, log, sqrt, division, libdevice
math) costs SPECIAL_FLOPS of them: a GPU's special-function unit returns 16 results per SM per
clock against 64 to 128 FMAs (128 to 256 FLOPs), so one costs the time of at least 8 FLOPs. What
the model ignores: caches (a re-read of a tile costs
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
from gym.grading.timing.speed_of_light import DEVICES, DevicePeak, fastest_flops, minimum_cost
from gym.schema.signal import BufferTraffic, LaunchTraffic, ModelledSpeed, Traffic
from gym.tasks.model import Shape, Task
from gym.tasks.references import call_args, clone_args, reference_fn
from gym.worker.traffic import TrafficCounts, op_cost, op_on_tensor_cores

# The FLOPs of CUDA-core time one special-function lane costs (see the module docstring).
SPECIAL_FLOPS = 8
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
    # Its FLOPs are a matmul's / convolution's (torch's FLOP counter has a formula): tensor cores.
    tensor: bool = False


class _CostMode(TorchDispatchMode):
    """Records every aten op with a tensor result that is not a view (`op_cost`)."""

    def __init__(self) -> None:
        super().__init__()
        self.costs: list[OpCost] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        moved = op_cost(func, args, kwargs, out)
        if moved is not None:
            self.costs.append(OpCost(op=str(func._overloadpacket), bytes=moved[0] + moved[1], flops=moved[2], tensor=op_on_tensor_cores(func)))
        return out


def reference_costs(task: Task, inputs: dict[str, Any], shape: Shape) -> list[OpCost]:
    """The aten ops one call of the reference runs on `inputs`, with their bytes and FLOPs."""
    reference = reference_fn(task, shape)
    arguments = call_args(clone_args(inputs), task.spec.params)
    mode = _CostMode()
    with torch.no_grad(), mode:
        reference(*arguments)
    return mode.costs


def vector_flops(peak: DevicePeak) -> float:
    """The profile's rate for FLOPs outside tensor cores (its float32 CUDA-core peak)."""
    return peak.flops.get("float32") or min(peak.flops.values())


def compute_seconds(dot: float, other: float, special: float, peak: DevicePeak, dtype: torch.dtype) -> float:
    """Seconds of `dot` tensor-core FLOPs, `other` CUDA-core FLOPs and `special` special-function lanes (among `other`)."""
    return dot / fastest_flops(peak, dtype) + (other + (SPECIAL_FLOPS - 1) * special) / vector_flops(peak)


def launch_seconds(bytes_moved: float, flops: float, peak: DevicePeak, dtype: torch.dtype, other: float = 0.0, special: float = 0.0) -> float:
    """One launch's modelled seconds: the roofline bound plus the profile's launch overhead (`flops` on
    tensor cores; `other` CUDA-core FLOPs, `special` of them special-function lanes)."""
    return max(bytes_moved / peak.bandwidth, compute_seconds(flops, other, special, peak, dtype)) + peak.launch_overhead_s


def hidden_shape(task: Task, shape: Shape) -> bool:
    """Whether `shape` is one of the task's hidden shapes (and none of its public or benchmark ones): never shown."""
    shapes = task.spec.shapes
    wanted = dict(shape)
    return wanted in [dict(one) for one in shapes.hidden] and wanted not in [dict(one) for one in (*shapes.public, *shapes.bench)]


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


def shown_traffic(task: Task, traffic: Traffic, counts: TrafficCounts, dtype: torch.dtype) -> Traffic | None:
    """`traffic` as a grade may show it: unchanged for a public counted shape; for a hidden one, every
    figure scaled to `modelled_shape` (a public shape) and the trial named without its shape, so the
    grade never tells its hidden shape; None when a hidden count cannot be scaled (no minimum there)."""
    if not hidden_shape(task, traffic.shape):
        return traffic
    shape, byte_scale, flop_scale = modelled_shape(task, traffic.shape, dtype)
    if dict(shape) == dict(traffic.shape):
        return None
    other_scale = min(byte_scale, flop_scale)

    def scaled(value: float, scale: float = byte_scale) -> int:
        return round(value * scale)

    def flops(dot: int, total: int) -> int:
        return scaled(dot, flop_scale) + scaled(max(0, total - dot), other_scale)

    rows = counts.launches
    min_bytes, min_flops = minimum_cost(task, shape, dtype)
    return traffic.model_copy(
        update={
            "trial": f"{traffic.dtype} hidden trial, scaled to the modelled shape (a hidden shape is never shown)",
            "shape": dict(shape),
            "bytes_read": scaled(traffic.bytes_read),
            "bytes_written": scaled(traffic.bytes_written),
            "flops": flops(counts.dot_flops, counts.flops),
            "programs": scaled(traffic.programs),
            "min_bytes": min_bytes or None,
            "min_flops": min_flops or None,
            "per_launch": [
                row.model_copy(
                    update={
                        "programs": scaled(row.programs),
                        "bytes_read": scaled(row.bytes_read),
                        "bytes_written": scaled(row.bytes_written),
                        "flops": flops(count.dot_flops, count.flops),
                    }
                )
                for row, count in zip(traffic.per_launch, rows, strict=False)
            ],
            "buffers": [
                row.model_copy(update={"bytes": scaled(row.bytes), "bytes_read": scaled(row.bytes_read), "bytes_written": scaled(row.bytes_written)})
                for row in traffic.buffers
            ],
        }
    )


def modelled_shape(task: Task, counted: Shape, dtype: torch.dtype) -> tuple[Shape, float, float]:
    """The shape a grade is modelled at (the task's first benchmark shape; for a hidden counted shape
    without one, the first public shape; else the counted one, as when there is no minimum there)
    and the factors its bytes and FLOPs scale by from the counted shape."""
    shapes = task.spec.shapes
    targets = shapes.bench or (shapes.public if hidden_shape(task, counted) else [])
    if not targets:
        return counted, 1.0, 1.0
    target = targets[0]
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
    # Elementwise work grows with the data (an epilogue per output), not with a matmul's K.
    other_scale = min(byte_scale, flop_scale)

    def compute(dot: float, flops: float, special: float) -> float:
        return compute_seconds(dot * flop_scale, max(0.0, flops - dot) * other_scale, special * other_scale, peak, dtype)

    def seconds(bytes_moved: float, dot: float, flops: float, special: float) -> float:
        return max(bytes_moved * byte_scale / peak.bandwidth, compute(dot, flops, special)) + peak.launch_overhead_s

    # (bytes, dot FLOPs, FLOPs, special lanes) of each Triton launch and each torch op beside them, a launch of its own.
    rows = [(float(row.bytes_read + row.bytes_written), float(row.dot_flops), float(row.flops), float(row.special)) for row in counts.launches]
    kernels = [row for row in counts.launches if not row.torch_op]
    # Launches past the reported rows (MAX_LAUNCH_ROWS) are modelled as the rest of the totals, spread evenly.
    missing = counts.launch_total - len(kernels)
    if missing > 0:
        rest = (
            max(0, counts.bytes_read + counts.bytes_written - sum(row.bytes_read + row.bytes_written for row in kernels)) / missing,
            max(0, counts.dot_flops - sum(row.dot_flops for row in kernels)) / missing,
            max(0, counts.flops - sum(row.flops for row in kernels)) / missing,
            max(0, counts.special - sum(row.special for row in kernels)) / missing,
        )
        rows += [rest] * missing
    candidate = sum(seconds(*row) for row in rows)
    overhead = len(rows) * peak.launch_overhead_s
    memory_s = sum(row[0] for row in rows) * byte_scale / peak.bandwidth
    compute_s = compute(sum(row[1] for row in rows), sum(row[2] for row in rows), sum(row[3] for row in rows))
    bound = max((("launch", overhead), ("memory", memory_s), ("compute", compute_s)), key=lambda pair: pair[1])[0]
    eager = sum(seconds(op.bytes, op.flops if op.tensor else 0, op.flops, 0) for op in reference) if reference else None
    # torch.compile: one launch moving the task's minimum bytes and doing its minimum FLOPs at the fastest rate.
    compile_s = seconds(traffic.min_bytes or 0.0, traffic.min_flops or 0.0, traffic.min_flops or 0.0, 0) if traffic.min_bytes else None
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
