"""The share of a call's GPU time spent in Triton kernels (KernelBench levels 2-3 leave anchor ops
to torch: how much of the work did the submission's own kernels do?).

On a GPU the worker runs one more call after the graded ones, untimed and unchecked, under
`torch.profiler` (CUDA activity), and sums the device time of each kernel: those whose name is
one of the Triton kernels the call launched count as Triton, every other device kernel (cuDNN,
cuBLAS, torch's own) as torch. On CPU there are no device kernels: no figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def share_of(kernels: Iterable[tuple[str, float]], triton_names: set[str]) -> float | None:
    """Triton's fraction of the device time of `kernels` ((name, microseconds) pairs); None when
    nothing ran on the device. A kernel is Triton's when its name is, or starts with, a launched
    Triton kernel's name (compiled kernels may carry a suffix)."""
    triton = total = 0.0
    for name, microseconds in kernels:
        if microseconds <= 0:
            continue
        total += microseconds
        if name in triton_names or any(name.startswith(known) for known in triton_names):
            triton += microseconds
    return triton / total if total > 0 else None


def profile_kernels(call: Callable[[], Any]) -> list[tuple[str, int, float]]:
    """Run `call` once under the CUDA profiler: (kernel name, calls, device microseconds) of every
    device kernel it ran, slowest first; empty when there is no GPU or the profiler records nothing."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if not torch.cuda.is_available():
        return []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    totals: dict[str, list[float]] = {}
    for event in prof.events():
        device_time = float(getattr(event, "device_time", 0.0) or getattr(event, "cuda_time", 0.0) or 0.0)
        if getattr(event, "device_type", None) == torch.autograd.DeviceType.CUDA or device_time > 0:
            entry = totals.setdefault(str(event.name), [0, 0.0])
            entry[0] += 1
            entry[1] += device_time
    return sorted(((name, int(calls), us) for name, (calls, us) in totals.items()), key=lambda row: -row[2])


def profiled_share(call: Callable[[], Any], triton_names: set[str]) -> float | None:
    """Run `call` once under the CUDA profiler and return Triton's share of its device time
    (None when the profiler is unavailable or records nothing)."""
    return share_of(((name, us) for name, _, us in profile_kernels(call)), triton_names)
