"""Speed of light: the least time a kernel could take on a known GPU.

`bound = max(min_bytes / bandwidth, min_flops / peak)` from the task's
minimum bytes moved and FLOPs (expressions of its shape parameters) and a
table of device peaks. A measured time below the bound is physically
impossible, so the grade is flagged (`below_speed_of_light`) and not ranked.

Peaks are dense (no structured sparsity) vendor datasheet figures, read from
gym/grading/timing/gpu_profiles.toml (each entry names its source). Where working sets fit in the last-level cache, HBM
bandwidth is not a bound, so the check only applies when the minimum bytes
exceed the cache size by a margin.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import torch

from gym.tasks.model import Shape, Task
from gym.tasks.shape_expr import evaluate

TB = 1e12
TFLOPS = 1e12
MB = 1 << 20


# The profiles file: every device's peaks, its launch overhead and its source.
PROFILES_FILE = Path(__file__).with_name("gpu_profiles.toml")


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
    # Seconds one more kernel launch adds (the modelled times' per-launch term).
    launch_overhead_s: float = 3e-6
    # Where the figures come from.
    source: str = ""


def load_profiles(path: Path = PROFILES_FILE) -> dict[str, DevicePeak]:
    """The profiles file as DevicePeaks by profile name."""
    table = tomllib.loads(path.read_text())["profiles"]
    return {
        name: DevicePeak(
            match=tuple(entry["match"]),
            bandwidth=float(entry["bandwidth_tbps"]) * TB,
            flops={dtype: float(rate) * TFLOPS for dtype, rate in entry["tflops"].items()},
            cache_bytes=int(entry["cache_mb"] * MB),
            exclude=tuple(entry.get("exclude", ())),
            launch_overhead_s=float(entry["launch_overhead_us"]) * 1e-6,
            source=str(entry["source"]),
        )
        for name, entry in table.items()
    }


DEVICES: dict[str, DevicePeak] = load_profiles()

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
