"""Grade one submission for one task: plan trials, run the worker in a sandbox,
read its records back defensively, judge them under the contract.

`grade()` never raises for anything the submission does: every failure ends
in a `GradeResult` with a precise status.
"""

from __future__ import annotations

import hashlib
import platform
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from gym.audit import audit_source
from gym.feedback import write_feedback
from gym.inputs import new_secret
from gym.integrity import Violation
from gym.job_files import write_job
from gym.judge import judge
from gym.references import reference_fn
from gym.result import Environment, GradeResult, Status, Timings, TimingSummary
from gym.sandbox import DEFAULT_SANDBOX, Job, Limits, SandboxUnavailable, get_sandbox
from gym.speed_of_light import bound_seconds
from gym.task_loader import TaskLoadError, find_task
from gym.task_model import Task
from gym.timing import summarize, time_each, warm_up
from gym.timing_policy import TimingPolicy
from gym.timing_rounds import TimingRounds, run_rounds
from gym.trials import CallPlan, Trial, call_args, clone_args, plan_trials, plan_warmup_call, timed_trial
from gym.verdict import GradeFailure, Verdict, flag
from gym.wire import WorkerReport


def default_device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


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
        driver=torch.version.cuda if device.type == "cuda" else None,
        sandbox=sandbox,
    )


# ---------------------------------------------------------------- timing


def reference_timing(
    task: Task, argsets: list[dict[str, Any]], warmup: CallPlan, device: torch.device, policy: TimingPolicy, compiled: bool = False
) -> TimingSummary:
    """The reference (eager, or under torch.compile) timed like the candidate: warmed
    up for the same time on the same warm-up inputs, then once on each of the
    candidate's timed inputs (fresh clones), with the same timer."""
    reference = reference_fn(task)
    if compiled:
        reference = torch.compile(reference)

    def run(args: dict[str, Any]) -> Any:
        return reference(*call_args(args, task.spec.params))

    runs = warm_up(run, lambda: clone_args(warmup.args), device, policy.warmup_s)
    samples = time_each(run, [clone_args(a) for a in argsets], device, warmup=0)
    return TimingSummary(**summarize(samples), warmup_runs=runs)


def build_timings(
    task: Task, trial: Trial, rounds: TimingRounds, warmup: CallPlan, device: torch.device, policy: TimingPolicy, warmup_runs: int | None
) -> Timings:
    timings = Timings(
        device=device.type if device.type == "cpu" else torch.cuda.get_device_name(), interpreted=device.type == "cpu", trial=trial.label,
        target_rse=policy.target_rse, stop_reason=rounds.stop.value if rounds.stop else None, rounds=rounds.rounds,
    )
    samples = [value for value in rounds.samples if value >= 0]
    if not samples:
        timings.note = "the candidate was not timed"
        return timings
    timings.candidate = TimingSummary(**summarize(samples), warmup_runs=warmup_runs)
    timings.reference = reference_timing(task, rounds.argsets, warmup, device, policy)
    if timings.interpreted:
        timings.compiled_note = "not measured on CPU: interpreted timings are never compared with compiled code"
    else:
        try:
            timings.compiled = reference_timing(task, rounds.argsets, warmup, device, policy, compiled=True)
        except Exception as error:  # noqa: BLE001 - a baseline that cannot be measured is reported, not guessed
            timings.compiled_note = f"torch.compile failed: {type(error).__name__}: {str(error)[:300]}"
    return timings


# ---------------------------------------------------------------- entry point


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
    warmup: CallPlan | None = None
    timed: Trial | None = None
    rounds: TimingRounds | None = None
    report: WorkerReport | None = None
    layout: list[tuple[Trial, list[int]]] = []
    verdict = Verdict()
    task_version = 0
    try:
        if isinstance(task, str):
            task = find_task(task)
        task_version = task.spec.version
        if not submission.is_file():
            raise GradeFailure(Status.compile_error, f"submission file {submission} does not exist")
        if audit:
            findings = audit_source(submission.read_text(errors="replace"))
            if findings:
                raise GradeFailure(
                    Status.rejected,
                    "the static audit refused the submission: " + "; ".join(f"line {f.line}: {f.message}" for f in findings),
                    flags=list(dict.fromkeys(f"audit:{f.rule}" for f in findings)),
                )
        runner = get_sandbox(sandbox)
        secret = new_secret() if secret is None else secret
        try:
            trials = plan_trials(task, device, secret, include_hidden, gpu=device.type == "cuda", timing_reps=reps, bench=bench)
        except Exception as error:  # noqa: BLE001 - a broken task is the gym's failure
            raise GradeFailure(Status.infra_error, f"could not prepare trials: {type(error).__name__}: {error}") from error
        with tempfile.TemporaryDirectory(prefix="kgym-job-") as tmp:
            job = Job.in_folder(Path(tmp), device.type, limits)
            timed = timed_trial(trials)
            warmup = plan_warmup_call(task, timed or trials[0], device, secret)
            layout = write_job(job, submission, trials, shuffle_seed=secret, warmup=warmup, warmup_s=policy.warmup_s)
            wall_limit = timeout_s if timeout_s is not None else task.spec.timeout_s
            outcome = runner.run(job, wall_limit)
            verdict, report, timed_seconds = judge(layout, job, outcome, device, task.spec.allowed_torch)
            if keep_job is not None:
                shutil.copytree(tmp, keep_job, dirs_exist_ok=True)
        if verdict.status == Status.passed and timed is not None:
            first = TimingRounds(samples=list(timed_seconds), argsets=[plan.args for plan in timed.calls if plan.role == "timed"])
            rounds = run_rounds(task, timed, submission, runner, device, secret, policy, warmup, limits or Limits(), wall_limit, first)
            if rounds.failure is not None:
                verdict.worsen(rounds.failure.status, f"timing round {rounds.rounds}: {rounds.failure.error}")
                verdict.flags.extend(flag for flag in rounds.failure.flags if flag not in verdict.flags)
                verdict.trials.extend(trial for trial in rounds.failure.trials if not trial.passed)
    except GradeFailure as failure:
        verdict.worsen(failure.status, failure.message)
        verdict.flags.extend(failure.flags)
    except (TaskLoadError, SandboxUnavailable) as error:
        verdict.worsen(Status.infra_error, str(error))
    except Exception as error:  # noqa: BLE001 - the gym's own failure, reported not raised
        verdict.worsen(Status.infra_error, f"{type(error).__name__}: {error}")
    timings = None
    speedup = None
    sol_fraction = None
    speedup_compile = None
    if verdict.status == Status.passed and isinstance(task, Task) and layout and rounds is not None and warmup is not None:
        trial = timed_trial([trial for trial, _ in layout]) or layout[0][0]
        timings = build_timings(task, trial, rounds, warmup, device, policy, report.warmup_runs if report else None)
        if timings.candidate and timings.reference and timings.candidate.median_s > 0:
            speedup = timings.reference.median_s / timings.candidate.median_s
        if timings.candidate and timings.compiled and timings.candidate.median_s > 0:
            speedup_compile = timings.compiled.median_s / timings.candidate.median_s
        if timings.candidate and not timings.interpreted:
            bound = bound_seconds(task, trial.shape, trial.dtype, timings.device)
            if bound is not None:
                sol_fraction = bound / timings.candidate.median_s
                if timings.candidate.median_s < bound:
                    flag(verdict, [Violation(
                        "below_speed_of_light",
                        f"measured {timings.candidate.median_s * 1e6:.2f} us, below the {bound * 1e6:.2f} us this "
                        f"{timings.device} needs at best: the timing cannot be real",
                    )])
                    speedup = speedup_compile = None
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
        graded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=time.monotonic() - started,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})
