"""Speed of light: the least time a kernel could take on a known GPU.

`bound = max(min_bytes / bandwidth, min_flops / peak)` from the task's
minimum bytes moved and FLOPs (expressions of its shape parameters) and a
table of device peaks. A measured time below the bound is physically
impossible, so the grade is flagged (`below_speed_of_light`) and not ranked.

Peaks are dense (no structured sparsity) vendor datasheet figures; each entry
names its source. Where working sets fit in the last-level cache, HBM
bandwidth is not a bound, so the check only applies when the minimum bytes
exceed the cache size by a margin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from gym.tasks.model import Shape, Task
from gym.tasks.shape_expr import evaluate

TB = 1e12
TFLOPS = 1e12
MB = 1 << 20


@dataclass(frozen=True)
class DevicePeak:
    # Words of torch.cuda.get_device_name() that identify the device (all must be present).
    match: tuple[str, ...]
    # HBM/GDDR bandwidth, bytes per second.
    bandwidth: float
    # Dense peak FLOP/s by dtype name ("tf32" is float32 on tensor cores).
    flops: dict[str, float]
    # Last-level cache, bytes: working sets below a few times this can beat HBM bandwidth
    # (the datasheet's; the device's own report, when there is one, is used instead).
    cache_bytes: int
    # Words that must not be in the name (an "H100 NVL" is not an "H100 SXM").
    exclude: tuple[str, ...] = ()


DEVICES: dict[str, DevicePeak] = {
    # NVIDIA H100 SXM5 datasheet (2023): 3.35 TB/s HBM3; dense BF16/FP16 989.4, TF32 494.7, FP32 66.9 TFLOPS; 50 MB L2.
    "H100 SXM": DevicePeak(
        ("H100",),
        3.35 * TB,
        {"bfloat16": 989.4 * TFLOPS, "float16": 989.4 * TFLOPS, "tf32": 494.7 * TFLOPS, "float32": 66.9 * TFLOPS},
        50 * MB,
        exclude=("PCIe", "NVL"),
    ),
    # NVIDIA H100 NVL datasheet (per GPU): 3.9 TB/s HBM3; dense BF16/FP16 835.5, TF32 417.5, FP32 60 TFLOPS; 50 MB L2.
    "H100 NVL": DevicePeak(
        ("H100", "NVL"), 3.9 * TB, {"bfloat16": 835.5 * TFLOPS, "float16": 835.5 * TFLOPS, "tf32": 417.5 * TFLOPS, "float32": 60.0 * TFLOPS}, 50 * MB
    ),
    # NVIDIA H100 PCIe datasheet: 2.0 TB/s HBM2e; dense BF16/FP16 756, TF32 378, FP32 51.2 TFLOPS; 50 MB L2.
    "H100 PCIe": DevicePeak(
        ("H100", "PCIe"), 2.0 * TB, {"bfloat16": 756.0 * TFLOPS, "float16": 756.0 * TFLOPS, "tf32": 378.0 * TFLOPS, "float32": 51.2 * TFLOPS}, 50 * MB
    ),
    # NVIDIA H200 SXM datasheet (2024): 4.8 TB/s HBM3e; compute as H100 SXM (989.4 / 494.7 / 66.9 TFLOPS); 50 MB L2.
    "H200": DevicePeak(("H200",), 4.8 * TB, {"bfloat16": 989.4 * TFLOPS, "float16": 989.4 * TFLOPS, "tf32": 494.7 * TFLOPS, "float32": 66.9 * TFLOPS}, 50 * MB),
    # NVIDIA A100 datasheet: 40 GB SXM 1.555 TB/s HBM2; dense BF16/FP16 312, TF32 156, FP32 19.5 TFLOPS; 40 MB L2.
    "A100 40GB": DevicePeak(
        ("A100", "40GB"), 1.555 * TB, {"bfloat16": 312.0 * TFLOPS, "float16": 312.0 * TFLOPS, "tf32": 156.0 * TFLOPS, "float32": 19.5 * TFLOPS}, 40 * MB
    ),
    # NVIDIA A100 datasheet: 80 GB SXM 2.039 TB/s HBM2e; same compute as 40 GB; 40 MB L2.
    "A100 80GB": DevicePeak(
        ("A100", "80GB"), 2.039 * TB, {"bfloat16": 312.0 * TFLOPS, "float16": 312.0 * TFLOPS, "tf32": 156.0 * TFLOPS, "float32": 19.5 * TFLOPS}, 40 * MB
    ),
    # NVIDIA L4 datasheet: 300 GB/s GDDR6; dense BF16/FP16 121, TF32 60, FP32 30.3 TFLOPS; 48 MB L2.
    "L4": DevicePeak(("L4",), 0.300 * TB, {"bfloat16": 121.0 * TFLOPS, "float16": 121.0 * TFLOPS, "tf32": 60.0 * TFLOPS, "float32": 30.3 * TFLOPS}, 48 * MB),
    # NVIDIA L40S datasheet: 864 GB/s GDDR6; dense BF16/FP16 362, TF32 183, FP32 91.6 TFLOPS; 96 MB L2.
    "L40S": DevicePeak(
        ("L40S",), 0.864 * TB, {"bfloat16": 362.0 * TFLOPS, "float16": 362.0 * TFLOPS, "tf32": 183.0 * TFLOPS, "float32": 91.6 * TFLOPS}, 96 * MB
    ),
    # NVIDIA B200 (DGX B200 / HGX datasheet, per GPU): 8 TB/s HBM3e; dense BF16/FP16 2250, TF32 1100, FP32 80 TFLOPS; 126 MB L2.
    "B200": DevicePeak(
        ("B200",), 8.0 * TB, {"bfloat16": 2250.0 * TFLOPS, "float16": 2250.0 * TFLOPS, "tf32": 1100.0 * TFLOPS, "float32": 80.0 * TFLOPS}, 126 * MB
    ),
    # AMD Instinct MI300X datasheet: 5.3 TB/s HBM3; dense BF16/FP16 1307.4, TF32 653.7, FP32 163.4 TFLOPS; 256 MB Infinity Cache.
    "MI300X": DevicePeak(
        ("MI300X",), 5.3 * TB, {"bfloat16": 1307.4 * TFLOPS, "float16": 1307.4 * TFLOPS, "tf32": 653.7 * TFLOPS, "float32": 163.4 * TFLOPS}, 256 * MB
    ),
}

# Only working sets at least this many times the cache are bound by DRAM bandwidth.
CACHE_MARGIN = 4


def find_device(name: str) -> DevicePeak | None:
    """The table entry for a device name such as "NVIDIA H100 80GB HBM3" (most specific match wins)."""
    tokens = set(re.split(r"[^A-Za-z0-9]+", name))
    matches = [peak for peak in DEVICES.values() if all(part in tokens for part in peak.match) and not any(word in tokens for word in peak.exclude)]
    return max(matches, key=lambda peak: len(peak.match), default=None)


def fastest_flops(peak: DevicePeak, dtype: torch.dtype) -> float:
    """The highest rate an honest kernel could reach for `dtype` (float32 may use TF32 tensor cores)."""
    names = {torch.float32: ("float32", "tf32"), torch.float16: ("float16",), torch.bfloat16: ("bfloat16",)}
    rates = [peak.flops[name] for name in names.get(dtype, ("float32", "tf32")) if name in peak.flops]
    return max(rates) if rates else max(peak.flops.values())


def device_cache_bytes(device: torch.device) -> int | None:
    """The L2 size the device reports (PyTorch's `L2_cache_size`), None on CPU or when unknown."""
    if device.type != "cuda":
        return None
    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)
    return int(size) if size else None


def minimum_cost(task: Task, shape: Shape, dtype: torch.dtype) -> tuple[float, float]:
    """(bytes, FLOPs) one call must at least move and do: from the task's expressions, or for an
    imported KernelBench task from the figures measured at import (float32; scaled to `dtype`)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    source = task.spec.kernelbench
    if source is not None:
        measured = next((entry for entry in source.cost if entry.shape == dict(shape)), None)
        if measured is None:
            return 0.0, 0.0
        return measured.bytes * itemsize / 4, float(measured.flops)
    values = {**shape, "itemsize": itemsize}
    return evaluate(task.spec.min_bytes, values), evaluate(task.spec.min_flops, values)


def bound_seconds(task: Task, shape: Shape, dtype: torch.dtype, device_name: str, cache_bytes: int | None = None) -> float | None:
    """The speed-of-light time for one call, or None when the device is unknown
    or the working set is small enough to live in cache. `cache_bytes` is the
    device's own L2 report (see device_cache_bytes); the table's figure otherwise."""
    peak = find_device(device_name)
    if peak is None:
        return None
    cache = cache_bytes if cache_bytes else peak.cache_bytes
    min_bytes, min_flops = minimum_cost(task, shape, dtype)
    memory_time = min_bytes / peak.bandwidth if min_bytes >= CACHE_MARGIN * cache else 0.0
    compute_time = min_flops / fastest_flops(peak, dtype)
    bound = max(memory_time, compute_time)
    return bound if bound > 0 else None
