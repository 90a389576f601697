"""The grade's training signal from what the witness measured: traffic, modelled speed, the kernel profile.

Nothing here decides a verdict. Every figure comes from the witness (the clean process that
replays the kernels alone after the submission's process is gone) or from the trusted side's
own run of the reference; a failed count costs the grade its figures, never its status.
"""

from __future__ import annotations

from typing import Any

from gym.grading.traffic_model import modelled_speed, reference_costs, traffic_summary
from gym.grading.verdict import WitnessFigures
from gym.schema.signal import KernelProfile, KernelTime
from gym.tasks.model import Task
from gym.worker.triton_share import share_of


def kernel_profile(figures: WitnessFigures) -> KernelProfile | None:
    """The profiled replay's device kernels (GPU only), Triton's marked by the names the tape launched."""
    if not figures.kernels:
        return None
    launched = set(figures.launched)
    return KernelProfile(
        tool="torch.profiler",
        kernels=[
            KernelTime(
                name=run.name, triton=run.name in launched or any(run.name.startswith(name) for name in launched), calls=run.calls, device_us=run.device_us
            )
            for run in figures.kernels
        ],
    )


NCU_NEEDS_GPU = "ncu needs a GPU: this grade ran on the CPU, so there are no counter figures"


def with_ncu(profile: KernelProfile | None, ncu: tuple[float | None, float | None, str | None] | None, device_type: str) -> KernelProfile:
    """The profile with Nsight Compute's speed-of-light figures, or the note saying why there are none."""
    profile = profile or KernelProfile(tool="ncu")
    if device_type != "cuda":
        return profile.model_copy(update={"note": NCU_NEEDS_GPU})
    if ncu is None:
        return profile.model_copy(update={"note": "ncu was asked for but the witness ran no profiled replay"})
    memory, compute, note = ncu
    tool = "torch.profiler+ncu" if profile.kernels else "ncu"
    return profile.model_copy(update={"tool": tool, "memory_throughput_pct": memory, "compute_throughput_pct": compute, "note": note})


def signal_fields(task: Task, figures: WitnessFigures | None, gpu_profile: str, *, ncu: bool = False, device: Any = None) -> dict[str, Any]:
    """GradeResult fields (traffic, traffic_ratio, modelled*, profile, triton_time_share) from `figures`;
    `ncu` (asked for with `profile="ncu"`) adds Nsight Compute's figures, or why there are none."""
    device_type = getattr(device, "type", "cpu")
    if figures is None:
        return {"profile": with_ncu(None, None, device_type)} if ncu else {}
    fields: dict[str, Any] = {}
    if figures.traffic is not None and figures.dtype is not None:
        traffic = traffic_summary(task, figures.label, figures.shape, figures.dtype, figures.traffic)
        try:
            reference = reference_costs(task, figures.inputs, figures.shape)
        except Exception:  # noqa: BLE001 - a reference that cannot be traced has no eager model, nothing else is lost
            reference = None
        modelled = modelled_speed(task, figures.traffic, traffic, reference, figures.dtype, gpu_profile)
        fields.update(
            traffic=traffic,
            traffic_ratio=traffic.traffic_ratio,
            modelled=modelled,
            modelled_speedup_vs_eager=modelled.speedup_vs_eager,
            modelled_speedup_vs_compile=modelled.speedup_vs_compile,
        )
    profile = kernel_profile(figures)
    if profile is not None:
        fields["triton_time_share"] = share_of(((run.name, run.device_us) for run in profile.kernels), set(figures.launched))
    if ncu:
        profile = with_ncu(profile, figures.ncu, device_type)
    if profile is not None:
        fields["profile"] = profile
    return fields
