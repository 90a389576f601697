"""The training signal beside the verdict: counted traffic, modelled speed, profiles, confirmation runs.

Every figure here is produced on the trusted side or by the witness (the clean process that
replays the kernels alone, gym.worker.witness), never by counters in the submission's process.
"""

from __future__ import annotations

from pydantic import Field

from gym.schema.outcomes import ResultModel


class LaunchTraffic(ResultModel):
    kernel: str = Field(description='The launched @triton.jit function\'s name, or the aten op ("aten.convolution") of a torch op.')
    torch_op: bool = Field(
        default=False, description="A torch op the call ran beside its launches (an anchor the task allows), modelled as a launch of its own."
    )
    programs: int = Field(description="Program instances the launch ran (the grid's product; 0 for a torch op).")
    bytes_read: int = Field(description="Bytes loaded from global memory: unmasked lanes, each counted once per load, times its dtype's size.")
    bytes_written: int = Field(description="Bytes stored to global memory (atomics count as a read and a write).")
    flops: int = Field(description="Floating-point operations: 2·M·N·K per tl.dot, one per lane of each floating elementwise op.")


class BufferTraffic(ResultModel):
    name: str = Field(description='What the buffer is: an input\'s name ("x"), "output #1", or "scratch #N" for memory the call allocated.')
    bytes: int = Field(description="The buffer's size in bytes.")
    bytes_read: int = Field(description="Bytes the kernels loaded from it.")
    bytes_written: int = Field(description="Bytes the kernels stored to it.")
    times_read: float = Field(description="bytes_read / bytes: 1.0 reads it exactly once, 2.0 twice.")
    times_written: float = Field(description="bytes_written / bytes.")


class Traffic(ResultModel):
    trial: str = Field(description='The trial whose replay was counted, e.g. "float32 public #1".')
    shape: dict[str, int] = Field(description="Its shape parameters (a public shape: never secret).")
    dtype: str = Field(description="Its dtype variant.")
    bytes_read: int = Field(description="Bytes loaded from global memory by every launch of one call.")
    bytes_written: int = Field(description="Bytes stored to global memory by every launch of one call.")
    flops: int = Field(description="FLOPs of one call's launches (tl.dot and floating elementwise arithmetic).")
    launches: int = Field(description="Triton launches in one call.")
    programs: int = Field(description="Program instances over those launches.")
    torch_ops: int = Field(default=0, description="Torch compute ops the call ran beside its launches (anchor ops a task allows), not counted in the bytes.")
    min_bytes: float | None = Field(
        default=None, description="The task's minimum bytes one call must move at this shape (its speed-of-light figure); None when unknown."
    )
    min_flops: float | None = Field(default=None, description="The task's minimum FLOPs at this shape; None when unknown.")
    traffic_ratio: float | None = Field(default=None, description="(bytes_read + bytes_written) / min_bytes; 1.0 is the minimum. None without a minimum.")
    per_launch: list[LaunchTraffic] = Field(default_factory=list, description="The same counts launch by launch, in launch order.")
    buffers: list[BufferTraffic] = Field(default_factory=list, description="The bytes attributed to each buffer the kernels touched.")


class ModelledSpeed(ResultModel):
    profile: str = Field(description='The GPU profile the times are modelled on, e.g. "H100 SXM" (gym/grading/timing/gpu_profiles.toml).')
    label: str = Field(description='"modelled on <profile>, not measured": a roofline bound, never a timing.')
    shape: dict[str, int] = Field(
        description="The shape modelled at: the task's first benchmark shape (the counted figures scaled by the task's minimum bytes and FLOPs there), else the counted one."
    )
    candidate_s: float = Field(description="Σ over the candidate's launches of max(bytes / bandwidth, FLOPs / peak) + launch overhead.")
    eager_s: float | None = Field(default=None, description="The same model over the aten ops the reference runs (each reads its inputs, writes its output).")
    compile_s: float | None = Field(default=None, description="torch.compile modelled as one launch moving the task's minimum bytes.")
    speedup_vs_eager: float | None = Field(default=None, description="eager_s / candidate_s.")
    speedup_vs_compile: float | None = Field(default=None, description="compile_s / candidate_s.")
    launch_overhead_share: float = Field(description="The share of candidate_s that is per-launch overhead.")
    bound: str = Field(
        default="memory", description='What dominates candidate_s: "memory" (bytes / bandwidth), "compute" (FLOPs / peak) or "launch" (overhead).'
    )


class KernelTime(ResultModel):
    name: str = Field(description="The device kernel's name as the profiler reports it.")
    triton: bool = Field(description="Whether it is one of the Triton kernels the call launched.")
    calls: int = Field(description="How many times it ran in the profiled call.")
    device_us: float = Field(description="Its total device time, microseconds.")


class KernelProfile(ResultModel):
    tool: str = Field(description='"torch.profiler" (one extra untimed replay, GPU only), "ncu" (Nsight Compute, opt-in), or "torch.profiler+ncu" (both).')
    kernels: list[KernelTime] = Field(default_factory=list, description="Device kernels of the profiled call, slowest first.")
    memory_throughput_pct: float | None = Field(default=None, description="ncu only: memory throughput as % of peak (speed-of-light section).")
    compute_throughput_pct: float | None = Field(default=None, description="ncu only: compute (SM) throughput as % of peak.")
    note: str | None = Field(default=None, description="Why there is no profile or no counter figure (no GPU, ncu missing, counters not permitted).")


class Confirmation(ResultModel):
    reason: str = Field(description='Why the pass was re-graded, e.g. "speedup 4.1x vs torch.compile exceeds 3x".')
    speedup_first: float | None = Field(description="The first grade's speedup (vs eager) that triggered the re-grade.")
    speedup_second: float | None = Field(description="The confirmation grade's speedup vs eager (fresh secret, inputs in another order).")
    status_second: str = Field(description="The confirmation grade's status.")
    reproduced: bool = Field(description="Whether it passed with at least half the first speedup; if not, the grade is rejected (speedup_not_reproduced).")
