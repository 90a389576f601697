"""The grade's training signal from what the witness measured: traffic, modelled speed, the kernel profile.

Nothing here decides a verdict. Every figure comes from the witness (the clean process that
replays the kernels alone after the submission's process is gone) or from the trusted side's
own run of the reference; a failed count costs the grade its figures, never its status, and a
grade without figures earns no speed term (gym.harness.reward: the `modelled` preset pays it the
pass floor). Which replay is counted is the secret's choice among the hidden trials
(`counted_slot`), so no public shape is the one that pays; a hidden count is shown scaled to a
public shape (gym.grading.signal.traffic_model.shown_traffic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from gym.errors import UnknownProfile
from gym.grading.judging.verdict import WitnessFigures
from gym.grading.planning.seeds import GradeSeeds
from gym.grading.signal.traffic_model import modelled_speed, reference_costs, shown_traffic, traffic_summary
from gym.schema.signal import KernelProfile, KernelTime
from gym.tasks.model import Task
from gym.worker.triton_share import share_of


class _Trial(Protocol):
    @property
    def hidden(self) -> bool: ...
    @property
    def label(self) -> str: ...
    @property
    def dtype(self) -> Any: ...


class _Slot(Protocol):
    @property
    def trial(self) -> _Trial: ...


Slot = TypeVar("Slot", bound=_Slot)


def counted_slot(slots: Sequence[Slot], secret: int, task_id: str = "", size: Callable[[Slot], int] | None = None) -> Slot | None:
    """The replay the witness counts for the training signal: one the secret picks among the plain
    hidden trials of the first trial's dtype (a hidden shape, so a path lean at a known shape alone
    gains nothing); failing those, any hidden trial's; failing those, the first public one; None
    when there is no slot. With `size` (a slot's input elements), only hidden trials at least as
    large as every public one are picked (else the largest hidden ones): a tiny shape's count, one
    block for a few elements, scales to nonsense at the modelled shape. Deterministic in (task, secret)."""
    if not slots:
        return None
    first_dtype = slots[0].trial.dtype
    hidden = [slot for slot in slots if slot.trial.hidden]
    plain = [slot for slot in hidden if " hidden #" in slot.trial.label and slot.trial.dtype == first_dtype]
    pool = plain or hidden
    if size is not None and pool:
        public_sizes = [size(slot) for slot in slots if not slot.trial.hidden]
        floor = max(public_sizes, default=0)
        large = [slot for slot in pool if size(slot) >= floor]
        pool = large or [slot for slot in pool if size(slot) == max(size(each) for each in pool)]
    if not pool:
        public = [slot for slot in slots if not slot.trial.hidden]
        return public[0] if public else slots[0]
    chooser = GradeSeeds(task_id, secret).counted()
    return pool[chooser.randrange(len(pool))]


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


def traffic_fields(task: Task, figures: WitnessFigures, gpu_profile: str) -> dict[str, Any]:
    """traffic, traffic_ratio and the modelled fields from the witness's counts; none when the model
    cannot be made (the grade then earns no speed term from it) or a hidden count cannot be shown."""
    assert figures.traffic is not None
    try:
        reference = reference_costs(task, figures.inputs, figures.shape)
    except Exception:  # noqa: BLE001 - a reference that cannot be traced has no eager model, nothing else is lost
        reference = None
    traffic = traffic_summary(task, figures.label, figures.shape, figures.dtype, figures.traffic)
    modelled = modelled_speed(task, figures.traffic, traffic, reference, figures.dtype, gpu_profile)
    shown = shown_traffic(task, traffic, figures.traffic, figures.dtype)
    if shown is None:
        return {}
    return {
        "traffic": shown,
        "traffic_ratio": shown.traffic_ratio,
        "modelled": modelled,
        "modelled_speedup_vs_eager": modelled.speedup_vs_eager,
        "modelled_speedup_vs_compile": modelled.speedup_vs_compile,
    }


def signal_fields(task: Task, figures: WitnessFigures | None, gpu_profile: str, *, ncu: bool = False, device: Any = None) -> dict[str, Any]:
    """GradeResult fields (traffic, traffic_ratio, modelled*, profile, triton_time_share) from `figures`;
    `ncu` (asked for with `profile="ncu"`) adds Nsight Compute's figures, or why there are none."""
    device_type = getattr(device, "type", "cpu")
    if figures is None:
        return {"profile": with_ncu(None, None, device_type)} if ncu else {}
    fields: dict[str, Any] = {}
    if figures.traffic is not None and figures.dtype is not None:
        try:
            fields.update(traffic_fields(task, figures, gpu_profile))
        except UnknownProfile:
            raise
        except Exception:  # noqa: BLE001 - counts that cannot be modelled cost the grade its figures, never its status
            pass
    profile = kernel_profile(figures)
    if profile is not None:
        fields["triton_time_share"] = share_of(((run.name, run.device_us) for run in profile.kernels), set(figures.launched))
    if ncu:
        profile = with_ncu(profile, figures.ncu, device_type)
    if profile is not None:
        fields["profile"] = profile
    return fields
