"""The grade result: the one schema the CLI, the harness and the leaderboard share."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gym.schema.outcomes import CheckOutcome, ResultModel
from gym.schema.signal import Confirmation, KernelProfile, ModelledSpeed, Traffic
from gym.status import Status as Status

SCHEMA_VERSION = 1


# The kernel languages a submission may be written in.
Dsl = Literal["triton", "helion"]
DSLS: tuple[Dsl, ...] = ("triton", "helion")


class TrialResult(ResultModel):
    label: str = Field(description='e.g. "float32 public #1"; hidden trials are labelled "hidden" and carry no shape.')
    dtype: str = Field(description='Dtype variant of the trial, e.g. "float32".')
    shape: dict[str, int] | None = Field(description="Shape parameters; None for hidden trials (never revealed).")
    hidden: bool = Field(description="True for a hidden trial (inputs never shown to the agent).")
    passed: bool = Field(description="Whether every check held on this trial.")
    checks: list[CheckOutcome] = Field(description="One outcome per contract check that applies to this trial's dtype.")
    error: str | None = Field(
        default=None,
        description="Why the trial could not be judged (a call raised, a wrong structure...), if so.",
    )


class TimingSummary(ResultModel):
    median_s: float = Field(description="Median per-call seconds over the timed calls (each on fresh inputs).")
    mean_s: float = Field(description="Mean per-call seconds over the timed calls.")
    p10_s: float = Field(description="10th percentile of per-call seconds over the timed calls.")
    p90_s: float = Field(description="90th percentile of per-call seconds over the timed calls.")
    min_s: float = Field(description="Fastest per-call seconds over the timed calls.")
    rse: float | None = Field(
        default=None,
        description="Relative standard error of the median (None with a single sample).",
    )
    reps: int = Field(description="Timed repetitions.")
    warmup_runs: int | None = Field(default=None, description="Untimed warm-up runs before the timed ones.")
    overhead_subtracted_s: float = Field(
        default=0.0,
        description=(
            "Seconds subtracted from each sample for timer/flush/launch overhead. The gym subtracts nothing: the L2 "
            "flush runs before the start event and launch cost is part of the kernel's time."
        ),
    )


class ShapeTimings(ResultModel):
    trial: str = Field(description='The timed trial, e.g. "float32 bench #1".')
    shape: dict[str, int] = Field(description="Its shape parameters (benchmark and public shapes are never secret).")
    candidate: TimingSummary | None = Field(default=None, description="The submission's timing on this shape.")
    reference: TimingSummary | None = Field(
        default=None, description="Eager PyTorch at the same shape, same timer and timing policy (on inputs of its own; see baseline)."
    )
    compiled: TimingSummary | None = Field(
        default=None, description="torch.compile (dynamic=False) at the same shape, same timer and policy (GPU only; see baseline)."
    )
    compiled_note: str | None = Field(default=None, description="Why this shape has no torch.compile figure, if so.")
    speedup_vs_eager: float | None = Field(default=None, description="reference.median_s / candidate.median_s.")
    speedup_vs_compile: float | None = Field(default=None, description="compiled.median_s / candidate.median_s.")
    sol_fraction: float | None = Field(default=None, description="Speed-of-light time / candidate median on this shape (known GPUs only).")
    stop_reason: str | None = Field(default=None, description='Why this shape\'s timing stopped: "rse_target", "max_reps" or "budget".')
    rounds: int = Field(default=1, description="In how many sandboxed jobs this shape was timed.")
    baseline: str | None = Field(
        default=None,
        description=(
            'Where the reference and compiled figures came from: "measured" (timed during this grade) or "cached <date>" '
            "(reused from the baseline cache, measured at that ISO-8601 UTC time for the same task version, shape, dtype, "
            "device model, torch/Triton versions and timing policy); None when there are none (and in older results)."
        ),
    )


class Timings(ResultModel):
    device: str = Field(description='"cpu" or the GPU\'s name.')
    interpreted: bool = Field(
        description="True when measured under the Triton interpreter: never compare with GPU timings.",
    )
    trial: str = Field(description="Which trial's inputs were timed.")
    candidate: TimingSummary | None = Field(
        default=None,
        description="The submission's timing; None when it has no figures (see note).",
    )
    reference: TimingSummary | None = Field(
        default=None,
        description="The reference op in eager PyTorch, same shape, same timer and timing policy (see baseline).",
    )
    compiled: TimingSummary | None = Field(
        default=None,
        description="The reference under torch.compile, same shape, same timer and timing policy (GPU only; see baseline).",
    )
    note: str | None = Field(default=None, description="Why a side has no figures, if so.")
    compiled_note: str | None = Field(
        default=None,
        description="Why there is no torch.compile baseline, if so (never a number in its place).",
    )
    target_rse: float | None = Field(
        default=None,
        description="The stopping rule's target relative standard error of the candidate's median.",
    )
    stop_reason: str | None = Field(
        default=None,
        description='Why the candidate\'s timing stopped: "rse_target", "max_reps" or "budget".',
    )
    rounds: int = Field(default=1, description="In how many rounds the candidate was timed (each a sandboxed job).")
    baseline: str | None = Field(
        default=None,
        description=(
            'Where the baselines came from, over all shapes: "measured", "cached <oldest date>", or "cached <date> '
            '(k of n shapes; the rest measured)" (see ShapeTimings.baseline); None when there are none (and in older results).'
        ),
    )
    shapes: list[ShapeTimings] = Field(
        default_factory=list,
        description=(
            "Every timed shape (GPU: each benchmark shape; CPU: the first public shape). The top-level candidate, "
            "reference and compiled figures are the first shape's; the grade's speedups are the geometric means over these."
        ),
    )


class Environment(ResultModel):
    python: str = Field(description="Python version of the grading process.")
    torch: str = Field(description="torch version.")
    triton: str | None = Field(
        description="Triton version (the worker's, when it reported one); None when Triton is not installed.",
    )
    platform: str = Field(description="The host platform string (platform.platform()).")
    device: str = Field(description='"cpu" or "cuda".')
    gpu: str | None = Field(default=None, description="The GPU's name; None on CPU.")
    gpu_index: int | None = Field(
        default=None,
        description="The host's index of the GPU the grade ran on (nvidia-smi's numbering); None on CPU or when the host names it without one (MIG).",
    )
    gpu_uuid: str | None = Field(default=None, description='The UUID of the GPU the grade ran on ("GPU-..."); None on CPU or when it cannot be read.')
    driver: str | None = Field(
        default=None,
        description="The NVIDIA driver version (nvidia-smi); None on CPU or when it cannot be read.",
    )
    sandbox: str = Field(description="The sandbox backend the worker ran in.")


class GradeResult(ResultModel):
    schema_version: int = Field(
        default=SCHEMA_VERSION,
        description="Version of the GradeResult schema (SCHEMA_VERSION); readers refuse a newer one.",
    )
    task_id: str = Field(description='The task graded against, e.g. "l1/softmax".')
    task_version: int = Field(description="Version of the task the grade was made against.")
    submission_sha256: str = Field(description="sha256 of the submission file's bytes.")
    status: Status = Field(description="The verdict: passed, or why not.")
    trials: list[TrialResult] = Field(
        default_factory=list,
        description="One result per trial (dtype x shape), public and hidden.",
    )
    timings: Timings | None = Field(
        default=None,
        description="Candidate and baseline timings; None when the submission was not timed.",
    )
    speedup_vs_eager: float | None = Field(
        default=None,
        description=(
            "Reference (eager PyTorch) median time / candidate median time, same shape, same harness; with several "
            "timed shapes, the geometric mean of the per-shape speedups (timings.shapes)."
        ),
    )
    speedup_vs_compile: float | None = Field(
        default=None,
        description="Same against torch.compile (geometric mean over shapes); None unless every shape has a figure.",
    )
    sol_fraction: float | None = Field(
        default=None,
        description="Speed-of-light time / candidate time on a known GPU (geometric mean over shapes); None elsewhere.",
    )
    integrity_flags: list[str] = Field(
        default_factory=list,
        description='Integrity rules broken, e.g. "input_mutated:x".',
    )
    contract_preset: str | None = Field(
        default=None,
        description="The contract preset graded against instead of the task's own (e.g. \"kernelbench\": its fixed tolerance); None for the task's.",
    )
    torch_ops: dict[str, int] = Field(
        default_factory=dict,
        description="Torch compute ops the task lets stay in torch (KernelBench levels 2-3: its anchors) that ran in the candidate's calls, summed.",
    )
    triton_launch_share: float | None = Field(
        default=None,
        description="Triton launches / (Triton launches + torch compute ops) over the candidate's calls; None when nothing was counted.",
    )
    triton_time_share: float | None = Field(
        default=None,
        description="GPU only: Triton kernels' share of the device time of one profiled extra call of the candidate; None on CPU.",
    )
    traffic: Traffic | None = Field(
        default=None,
        description="Memory traffic and FLOPs of one call, counted by the witness in an interpreted replay of the kernels alone; None when not counted.",
    )
    traffic_ratio: float | None = Field(default=None, description="traffic.traffic_ratio: bytes moved / the task's minimum bytes (1.0 is the minimum).")
    modelled: ModelledSpeed | None = Field(default=None, description="Roofline times modelled on a GPU profile from the traffic: a direction, not a timing.")
    modelled_speedup_vs_eager: float | None = Field(default=None, description="modelled.speedup_vs_eager (modelled on a GPU profile, not measured).")
    modelled_speedup_vs_compile: float | None = Field(default=None, description="modelled.speedup_vs_compile (modelled on a GPU profile, not measured).")
    profile: KernelProfile | None = Field(
        default=None, description="GPU only: device kernels of one extra untimed replay (torch.profiler), or ncu's figures when asked for."
    )
    confirmation: Confirmation | None = Field(
        default=None,
        description="The re-grade of an implausible speedup (fresh secret, inputs in another order); None when none was needed.",
    )
    environment: Environment = Field(description="Versions, platform, device and sandbox backend the grade ran with.")
    feedback: str = Field(description="Written for the agent: what failed, where, and what usually causes it.")
    error: str | None = Field(default=None, description="Compiler/runtime/timeout/infra error text, when there is one.")
    graded_at: str = Field(description="ISO-8601 UTC time the grade finished.")
    duration_s: float = Field(description="Wall-clock seconds the grade took.")
    masked: bool = Field(
        default=False,
        description=(
            "True when this grade says nothing about the submission and an RL trainer should drop the sample rather than "
            "reward it: an infra_error the submission could not have caused (the sandbox failed before it ran, the gym's "
            "own exception, a task found degenerate at grade time). Never with an integrity flag. When not given it is "
            "derived: status infra_error and no integrity flag (so older results read the same). Surfaces that cannot "
            "drop a sample pay it RewardConfig.infra, never more than a wrong answer (gym.harness.reward.is_masked)."
        ),
    )
    degenerate_task: str | None = Field(
        default=None,
        description=(
            "Why the task turned out degenerate at grade time (a task self-check such as `nontrivial` failed: its inputs "
            "do not separate the right answer from trivial ones), naming the trial; the status is then infra_error, "
            "masked, paid no more than wrong_answer, and `kgym check-tasks` names the task. None otherwise."
        ),
    )
    dsl: Dsl = Field(
        default="triton",
        description='The kernel language of the submission, read from its source: "triton", or "helion" (it imports helion; gym.grading.intake.dsl).',
    )

    @model_validator(mode="before")
    @classmethod
    def _derive_masked(cls, data: Any) -> Any:
        """`masked` absent: an infra_error without integrity flags is masked (the gym's failure, not the submission's)."""
        if isinstance(data, dict) and "masked" not in data and "status" in data:
            try:
                status = Status(data["status"])
            except ValueError:
                return data  # the field validation reports the bad status
            data = {**data, "masked": status == Status.infra_error and not data.get("integrity_flags")}
        return data
