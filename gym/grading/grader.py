"""Grade one submission for one task: the orchestration only.

audit → plan trials → the grading job (`run_job`: job folder, sandbox, judge)
→ further timing rounds → baselines and the speed-of-light check → the
GradeResult with its feedback. `grade()` never raises for anything the
submission does: every failure ends in a `GradeResult` with a precise status.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import shutil
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from gym.grading.audit import audit_source
from gym.grading.baselines import build_timings
from gym.grading.feedback import write_feedback
from gym.grading.integrity import Violation
from gym.grading.job import GradeInProgress, run_job
from gym.grading.plan import CallPlan, Trial, plan_trials, plan_warmup_call, timed_trial
from gym.grading.speed_of_light import bound_seconds, device_cache_bytes
from gym.grading.timing_policy import TimingPolicy
from gym.grading.timing_rounds import TimingRounds, run_rounds
from gym.grading.verdict import GradeFailure, Verdict, flag
from gym.sandbox import DEFAULT_SANDBOX, Limits, SandboxUnavailable, get_sandbox
from gym.schema.result import Environment, GradeResult, Status, Timings
from gym.tasks.inputs import new_secret
from gym.tasks.loader import TaskLoadError, find_task
from gym.tasks.model import Task
from gym.worker.protocol import WorkerReport


def default_device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


@functools.cache
def driver_version() -> str | None:
    """The NVIDIA driver's version as nvidia-smi reports it (not torch's CUDA build); None without one."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def environment(device: torch.device, sandbox: str, report: WorkerReport | None) -> Environment:
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else None
    try:
        import triton

        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    return Environment(
        python=platform.python_version(),
        torch=torch.__version__,
        triton=(report.triton_version if report and report.triton_version else triton_version),
        platform=platform.platform(),
        device=device.type,
        gpu=gpu,
        driver=driver_version() if device.type == "cuda" else None,
        sandbox=sandbox,
    )


def _audit(task: Task, submission: Path) -> None:
    """GradeFailure(rejected) when the static audit refuses the source."""
    findings = audit_source(submission.read_text(errors="replace"), task.spec.allowed_torch)
    if findings:
        raise GradeFailure(
            Status.rejected,
            "the static audit refused the submission: " + "; ".join(f"line {f.line}: {f.message}" for f in findings),
            flags=list(dict.fromkeys(f"audit:{f.rule}" for f in findings)),
        )


def _plan(grade: GradeInProgress, include_hidden: bool, reps: int, bench: bool) -> list[Trial]:
    try:
        return plan_trials(grade.task, grade.device, grade.secret, include_hidden, gpu=grade.device.type == "cuda", timing_reps=reps, bench=bench)
    except Exception as error:  # a broken task is the gym's failure
        raise GradeFailure(Status.infra_error, f"could not prepare trials: {type(error).__name__}: {error}") from error


def _speed(task: Task, trial: Trial, timings: Timings, verdict: Verdict, device: torch.device) -> tuple[float | None, float | None, float | None]:
    """Speedups vs eager and torch.compile and the speed-of-light fraction; a time below
    the hardware's bound is flagged and ranks nowhere."""
    candidate = timings.candidate
    if candidate is None or candidate.median_s <= 0:
        return None, None, None
    speedup = timings.reference.median_s / candidate.median_s if timings.reference else None
    speedup_compile = timings.compiled.median_s / candidate.median_s if timings.compiled else None
    sol_fraction = None
    if not timings.interpreted:
        bound = bound_seconds(task, trial.shape, trial.dtype, timings.device, device_cache_bytes(device))
        if bound is not None:
            sol_fraction = bound / candidate.median_s
            if candidate.median_s < bound:
                flag(
                    verdict,
                    [
                        Violation(
                            "below_speed_of_light",
                            f"measured {candidate.median_s * 1e6:.2f} us, below the {bound * 1e6:.2f} us this "
                            f"{timings.device} needs at best: the timing cannot be real",
                        )
                    ],
                )
                speedup = speedup_compile = None
    return speedup, speedup_compile, sol_fraction


def grade(
    task: Task | str,
    submission: Path | str,
    *,
    sandbox: str = DEFAULT_SANDBOX,
    device: torch.device | str | None = None,
    secret: int | None = None,
    include_hidden: bool = True,
    timing_reps: int | None = None,
    timing: TimingPolicy | None = None,
    timeout_s: float | None = None,
    keep_job: Path | None = None,
    limits: Limits | None = None,
    audit: bool = True,
    bench: bool = False,
) -> GradeResult:
    """Grade `submission` (a Python file defining `kernel`) against `task`.

    `secret` is mixed into every trial's seed (a fresh one per call when
    omitted); `keep_job` copies the job folder there for debugging; `limits`
    overrides the sandbox's resource limits; `audit=False` skips the static
    audit (to prove the runtime defences hold on their own); `bench` times the
    task's first benchmark shape instead of its first public shape (GPU).
    `timing` sets the warm-up and stopping rule (default: TimingPolicy.for_device);
    `timing_reps` overrides its first round's size.
    """
    started = time.monotonic()
    submission = Path(submission)
    device = torch.device(device) if device is not None else default_device()
    digest = hashlib.sha256(submission.read_bytes()).hexdigest() if submission.is_file() else ""
    task_id = task if isinstance(task, str) else task.id
    policy = timing or TimingPolicy.for_device(device)
    if timing_reps is not None:
        policy = policy.model_copy(update={"min_reps": max(1, timing_reps), "max_reps": max(timing_reps, policy.max_reps)})
    reps = policy.min_reps if timing_reps != 0 else 0
    verdict = Verdict()
    report: WorkerReport | None = None
    task_version = 0
    timed: tuple[Trial, CallPlan, TimingRounds] | None = None
    try:
        if isinstance(task, str):
            task = find_task(task)
        task_version = task.spec.version
        if not submission.is_file():
            raise GradeFailure(Status.compile_error, f"submission file {submission} does not exist")
        if audit:
            _audit(task, submission)
        current = GradeInProgress(
            task=task,
            submission=submission,
            device=device,
            secret=new_secret() if secret is None else secret,
            policy=policy,
            limits=limits or Limits(),
            sandbox=get_sandbox(sandbox),
            sandbox_name=sandbox,
            timeout_s=timeout_s if timeout_s is not None else task.spec.timeout_s,
        )
        trials = _plan(current, include_hidden, reps, bench)
        timed_one = timed_trial(trials)
        warmup = plan_warmup_call(task, timed_one or trials[0], device, current.secret)
        job_started = time.monotonic()
        judged = run_job(current, trials, shuffle_seed=current.secret, warmup=warmup, keep_job=keep_job)
        verdict, report = judged.verdict, judged.report
        if verdict.status == Status.passed and timed_one is not None:
            first = TimingRounds(samples=list(judged.timed_seconds), argsets=[plan.args for plan in timed_one.calls if plan.role == "timed"])
            rounds = run_rounds(current, timed_one, warmup, first, first_cost_s=time.monotonic() - job_started)
            if rounds.failure is not None:
                verdict.worsen(rounds.failure.status, f"timing round {rounds.rounds}: {rounds.failure.error}")
                verdict.flags.extend(flag for flag in rounds.failure.flags if flag not in verdict.flags)
                verdict.trials.extend(trial for trial in rounds.failure.trials if not trial.passed)
            timed = (timed_one, warmup, rounds)
    except GradeFailure as failure:
        verdict.worsen(failure.status, failure.message)
        verdict.flags.extend(failure.flags)
    except (TaskLoadError, SandboxUnavailable) as error:
        verdict.worsen(Status.infra_error, str(error))
    except Exception as error:  # noqa: BLE001 - the gym's own failure, reported not raised
        verdict.worsen(Status.infra_error, f"{type(error).__name__}: {error}")
    timings = None
    speedup = speedup_compile = sol_fraction = None
    if verdict.status == Status.passed and isinstance(task, Task) and timed is not None:
        trial, warmup, rounds = timed
        timings = build_timings(task, trial, rounds, warmup, device, policy, report.warmup_runs if report else None)
        speedup, speedup_compile, sol_fraction = _speed(task, trial, timings, verdict, device)
    result = GradeResult(
        task_id=task_id,
        task_version=task_version,
        submission_sha256=digest,
        status=verdict.status,
        trials=verdict.trials,
        timings=timings,
        speedup_vs_eager=speedup,
        speedup_vs_compile=speedup_compile,
        sol_fraction=sol_fraction,
        integrity_flags=verdict.flags,
        environment=environment(device, sandbox, report),
        feedback="",
        error=verdict.error,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=time.monotonic() - started,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})
