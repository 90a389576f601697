"""The grade result: the one schema the CLI, the harness and the leaderboard share."""

from __future__ import annotations

from enum import Enum

from gym.schema.outcomes import CheckOutcome, ResultModel

SCHEMA_VERSION = 1


class Status(str, Enum):
    # Every check held on every trial and no integrity rule was broken.
    passed = "passed"
    # The kernel ran but an output broke the contract (values, dtype, shape, structure).
    wrong_answer = "wrong_answer"
    # The submission did not import, defines no kernel(...), or Triton refused to compile it.
    compile_error = "compile_error"
    # The kernel raised or the worker died while running it.
    runtime_error = "runtime_error"
    # The worker ran past the task's wall-clock limit and was killed.
    timeout = "timeout"
    # An integrity rule was broken (mutated inputs, a non-tensor output, ...); see integrity_flags.
    rejected = "rejected"
    # The gym failed (broken task, unreadable job folder, sandbox missing); not the submission's fault.
    infra_error = "infra_error"


class TrialResult(ResultModel):
    # e.g. "float32 public #1"; hidden trials are labelled "hidden" and carry no shape.
    label: str
    dtype: str
    # Shape parameters; None for hidden trials (never revealed).
    shape: dict[str, int] | None
    hidden: bool
    # Whether every check held on this trial.
    passed: bool
    # One outcome per contract check that applies to this trial's dtype.
    checks: list[CheckOutcome]
    # Why the trial could not be judged (a call raised, a wrong structure...), if so.
    error: str | None = None


class TimingSummary(ResultModel):
    # Statistics of per-call seconds over the timed calls (each on fresh inputs).
    median_s: float
    mean_s: float
    p10_s: float
    p90_s: float
    min_s: float
    # Relative standard error of the median (None with a single sample).
    rse: float | None = None
    # Timed repetitions.
    reps: int
    # Untimed warm-up runs before the timed ones.
    warmup_runs: int | None = None
    # Seconds subtracted from each sample for timer/flush/launch overhead. The gym subtracts
    # nothing: the L2 flush runs before the start event and launch cost is part of the kernel's time.
    overhead_subtracted_s: float = 0.0


class Timings(ResultModel):
    # "cpu" or the GPU's name.
    device: str
    # True when measured under the Triton interpreter: never compare with GPU timings.
    interpreted: bool
    # Which trial's inputs were timed.
    trial: str
    candidate: TimingSummary | None = None
    # The reference op in eager PyTorch, same inputs, same timer.
    reference: TimingSummary | None = None
    # The reference under torch.compile, same inputs, same timer (GPU only).
    compiled: TimingSummary | None = None
    # Why a side has no figures, if so.
    note: str | None = None
    # Why there is no torch.compile baseline, if so (never a number in its place).
    compiled_note: str | None = None
    # The stopping rule: the RSE target, why the candidate's timing stopped
    # ("rse_target", "max_reps", "budget"), and in how many rounds (each a sandboxed job).
    target_rse: float | None = None
    stop_reason: str | None = None
    rounds: int = 1


class Environment(ResultModel):
    python: str
    torch: str
    triton: str | None
    platform: str
    # "cpu" or "cuda".
    device: str
    gpu: str | None = None
    driver: str | None = None
    # The sandbox backend the worker ran in.
    sandbox: str


class GradeResult(ResultModel):
    schema_version: int = SCHEMA_VERSION
    task_id: str
    task_version: int
    # sha256 of the submission file's bytes.
    submission_sha256: str
    status: Status
    trials: list[TrialResult] = []
    timings: Timings | None = None
    # Reference (eager PyTorch) median time / candidate median time, same inputs, same harness.
    speedup_vs_eager: float | None = None
    # Same against torch.compile; None until it is measured.
    speedup_vs_compile: float | None = None
    # Speed-of-light time / candidate time on a known GPU; None elsewhere.
    sol_fraction: float | None = None
    # Integrity rules broken, e.g. "input_mutated:x".
    integrity_flags: list[str] = []
    environment: Environment
    # Written for the agent: what failed, where, and what usually causes it.
    feedback: str
    # Compiler/runtime/timeout/infra error text, when there is one.
    error: str | None = None
    # ISO-8601 UTC time the grade finished.
    graded_at: str
    # Wall-clock seconds the grade took.
    duration_s: float
