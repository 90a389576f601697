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
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from gym.devices.lock import holding
from gym.devices.pool import describe
from gym.errors import ContractPresetError, GradeFailure, KernelSourceError, MissingExtra, SandboxUnavailable, TaskLoadError, UnknownProfile
from gym.extras import require
from gym.grading.baselines.cache import BaselineCache
from gym.grading.baselines.measure import BaselineSetting, build_timings, geometric_mean
from gym.grading.confirm import DEFAULT_THRESHOLD, confirmation_secret, confirmed
from gym.grading.feedback import write_feedback
from gym.grading.intake.audit import audit_source
from gym.grading.intake.dsl import submission_dsl
from gym.grading.intake.kernel_source import extract_kernels
from gym.grading.judging.integrity import Violation
from gym.grading.judging.verdict import Verdict, flag
from gym.grading.options import GradeOptions
from gym.grading.planning.plan import ROUND_BYTES_FRACTION, TimingRequest, Trial, add_late_calls, plan_trials, plan_warmup_call, timed_trials
from gym.grading.running.job import GradeInProgress, run_job
from gym.grading.running.job_files import JobCalls
from gym.grading.signal.traffic_model import profile_named
from gym.grading.signal.training_signal import signal_fields
from gym.grading.timing.speed_of_light import device_cache_bytes
from gym.grading.timing.timing_policy import TimingPolicy
from gym.grading.timing.timing_rounds import ShapeRounds, TimingRounds, run_rounds
from gym.grading.validation.task_validation import degenerate_at_grade
from gym.sandbox import Limits, get_sandbox
from gym.schema.result import Environment, GradeResult, Status, Timings
from gym.tasks.contract_presets import with_contract
from gym.tasks.inputs import new_secret
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from gym.worker.protocol import WorkerReport

# grade(task, submission file) -> GradeResult: what every surface grades through (an executor's `executor_grader`, or a test's fake).
Grader = Callable[[Task, Path], GradeResult]


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
    """The fingerprint of where the grade ran; on a GPU, which one (the grade's device, not the current one)."""
    slot = describe(device) if device.type == "cuda" else None
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
        gpu=slot.name if slot else None,
        gpu_index=slot.index if slot else None,
        gpu_uuid=slot.uuid if slot else None,
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


def _kernels(submission: Path) -> str:
    """The submission's kernels file (gym.grading.intake.kernel_source); GradeFailure(compile_error) when its
    jit code cannot be replayed on its own."""
    try:
        return extract_kernels(submission.read_text(errors="replace")).text
    except SyntaxError as error:
        raise GradeFailure(Status.compile_error, f"SyntaxError: {error.msg} (line {error.lineno})") from None
    except KernelSourceError as error:
        raise GradeFailure(Status.compile_error, f"{error} (kernels are replayed from the file's jit functions and constants alone)") from None


def _plan(grade: GradeInProgress, include_hidden: bool, reps: int, bench: bool, late_calls: bool) -> list[Trial]:
    try:
        trials = plan_trials(
            grade.task,
            grade.device,
            grade.secret,
            include_hidden,
            gpu=grade.device.type == "cuda",
            timing=TimingRequest(reps=reps, bench=bench, round_bytes=int(grade.limits.output_bytes * ROUND_BYTES_FRACTION)),
        )
        if late_calls:
            add_late_calls(trials, grade.secret)
        return trials
    except Exception as error:  # a broken task is the gym's failure
        raise GradeFailure(Status.infra_error, f"could not prepare trials: {type(error).__name__}: {error}") from error


def _speed(timings: Timings, verdict: Verdict) -> tuple[float | None, float | None, float | None]:
    """The grade's speedups vs eager and torch.compile and its speed-of-light fraction: geometric
    means over the timed shapes. A time below the hardware's bound on any shape (a fraction of
    speed of light above 1) is flagged and the grade ranks nowhere."""
    if not timings.shapes or any(entry.candidate is None for entry in timings.shapes):
        return None, None, None
    sol_fraction = geometric_mean([entry.sol_fraction for entry in timings.shapes])
    impossible = [entry for entry in timings.shapes if entry.sol_fraction is not None and entry.sol_fraction > 1]
    if impossible:
        flag(
            verdict,
            [
                Violation(
                    "below_speed_of_light",
                    f"{entry.trial}: measured {entry.candidate.median_s * 1e6:.2f} us, below the "
                    f"{entry.candidate.median_s * entry.sol_fraction * 1e6:.2f} us this {timings.device} needs at best: the timing cannot be real",
                )
                for entry in impossible
                if entry.candidate is not None and entry.sol_fraction is not None
            ],
        )
        return None, None, sol_fraction
    return (
        geometric_mean([entry.speedup_vs_eager for entry in timings.shapes]),
        geometric_mean([entry.speedup_vs_compile for entry in timings.shapes]),
        sol_fraction,
    )


def _time_and_judge(
    current: GradeInProgress, include_hidden: bool, reps: int, bench: bool, late_calls: bool, keep_job: Path | None
) -> tuple[Verdict, WorkerReport | None, TimingRounds | None]:
    """The grading job, then further timing rounds for every timed shape of a candidate that passed."""
    task = current.task
    trials = _plan(current, include_hidden, reps, bench, late_calls)
    shapes = [ShapeRounds(trial=trial, warmup=plan_warmup_call(task, trial, current.device, current.secret)) for trial in timed_trials(trials)]
    warmups = [shape.warmup for shape in shapes if shape.warmup is not None] or [plan_warmup_call(task, trials[0], current.device, current.secret)]
    job_started = time.monotonic()
    judged = run_job(current, JobCalls(trials=trials, shuffle_seed=current.secret, warmups=warmups), keep_job=keep_job, signal=current.signal)
    verdict, report = judged.verdict, judged.report
    if verdict.status != Status.passed or not shapes:
        return verdict, report, None
    for shape in shapes:
        shape.add([plan for plan in shape.trial.calls if plan.role == "timed"], judged.timed_by_trial.get(shape.trial.label, []))
    rounds = run_rounds(current, TimingRounds(shapes=shapes), first_cost_s=time.monotonic() - job_started)
    if rounds.failure is not None:
        verdict.worsen(rounds.failure.status, f"timing round {rounds.rounds}: {rounds.failure.error}")
        verdict.flags.extend(flag for flag in rounds.failure.flags if flag not in verdict.flags)
        verdict.trials.extend(trial for trial in rounds.failure.trials if not trial.passed)
    return verdict, report, rounds


def _launch_share(verdict: Verdict) -> float | None:
    """Triton launches over launches plus torch compute ops, in the candidate's calls."""
    total = verdict.launches + sum(verdict.torch_ops.values())
    return verdict.launches / total if total else None


def _grade_once(
    task: Task | str,
    submission: Path | str,
    options: GradeOptions,
    *,
    device: torch.device | str | None = None,
    secret: int | None = None,
    keep_job: Path | None = None,
) -> GradeResult:
    """One grade, never re-checked: `grade` is the entry point (its docstring says what each option does)."""
    started = time.monotonic()
    sandbox, include_hidden, timing_reps, timeout_s = options.sandbox, options.include_hidden, options.timing_reps, options.timeout_s
    bench, late_calls, contract, gpu_profile, profile = options.bench, options.late_calls, options.contract, options.gpu_profile, options.profile
    submission = Path(submission)
    device = torch.device(device) if device is not None else default_device()
    bench = device.type == "cuda" if bench is None else bench
    digest = hashlib.sha256(submission.read_bytes()).hexdigest() if submission.is_file() else ""
    dsl = submission_dsl(submission.read_text(errors="replace")) if submission.is_file() else "triton"
    task_id = task if isinstance(task, str) else task.id
    policy = options.timing or TimingPolicy.for_device(device)
    if timing_reps is not None:
        policy = policy.model_copy(update={"min_reps": max(1, timing_reps), "max_reps": max(timing_reps, policy.max_reps)})
    reps = policy.min_reps if timing_reps != 0 else 0
    verdict = Verdict()
    report: WorkerReport | None = None
    task_version = 0
    timings = None
    speedup = speedup_compile = sol_fraction = None
    figures: dict[str, Any] = {}
    try:
        profile_named(gpu_profile)
        if profile not in (None, "ncu"):
            raise UnknownProfile(f'profile must be "ncu" or None, not {profile!r}')
        if isinstance(task, str):
            task = find_task(task)
        if contract is not None:
            task = with_contract(task, contract)
        task_version = task.spec.version
        if not submission.is_file():
            raise GradeFailure(Status.compile_error, f"submission file {submission} does not exist")
        if dsl == "helion":
            require("helion", "grading a Helion submission")
        if options.audit:
            _audit(task, submission)
        kernels = _kernels(submission) if options.replay else None
        with holding(device), tempfile.TemporaryDirectory(prefix="kgym-triton-cache-") as cache:
            current = GradeInProgress(
                task=task,
                submission=submission,
                device=device,
                secret=new_secret() if secret is None else secret,
                policy=policy,
                limits=options.limits or Limits(),
                sandbox=get_sandbox(sandbox),
                sandbox_name=sandbox,
                timeout_s=timeout_s if timeout_s is not None else task.spec.timeout_s,
                triton_cache=Path(cache),
                audit_hooks=options.audit_hooks,
                warm=options.warm,
                fresh_baselines=options.fresh_baselines,
                kernels=kernels,
                dsl=dsl,
                ncu=profile == "ncu",
                signal=options.signal,
            )
            verdict, report, rounds = _time_and_judge(current, include_hidden, reps, bench, late_calls, keep_job)
            if verdict.status == Status.passed and rounds is not None:
                timings = build_timings(
                    BaselineSetting(task=task, device=device, policy=policy, cache=BaselineCache(), fresh=current.fresh_baselines),
                    rounds,
                    report.warmup_runs if report else None,
                    device_cache_bytes(device),
                )
                speedup, speedup_compile, sol_fraction = _speed(timings, verdict)
            if verdict.status == Status.passed:
                figures = signal_fields(task, verdict.figures, gpu_profile, ncu=profile == "ncu", device=device)
    except GradeFailure as failure:
        verdict.worsen(failure.status, failure.message)
        verdict.flags.extend(failure.flags)
    except (TaskLoadError, SandboxUnavailable, ContractPresetError, UnknownProfile, MissingExtra) as error:
        verdict.worsen(Status.infra_error, str(error))
    except Exception as error:  # noqa: BLE001 - the gym's own failure, reported not raised
        verdict.worsen(Status.infra_error, f"{type(error).__name__}: {error}")
    result = GradeResult(
        task_id=task_id,
        task_version=task_version,
        submission_sha256=digest,
        dsl=dsl,
        status=verdict.status,
        trials=verdict.trials,
        timings=timings,
        speedup_vs_eager=speedup,
        speedup_vs_compile=speedup_compile,
        sol_fraction=sol_fraction,
        integrity_flags=verdict.flags,
        contract_preset=contract,
        torch_ops=verdict.torch_ops,
        triton_launch_share=_launch_share(verdict),
        # With the replay on, only the witness's profile counts (the submission's process can reach its own).
        triton_time_share=figures.pop("triton_time_share", None) if options.replay else (report.triton_time_share if report is not None else None),
        **figures,
        environment=environment(device, sandbox, report),
        feedback="",
        error=verdict.error,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=time.monotonic() - started,
        # A failed task self-check (`nontrivial`): infra_error, masked, and named for `kgym check-tasks`.
        degenerate_task=degenerate_at_grade(verdict.trials) if verdict.status == Status.infra_error else None,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})


def grade(
    task: Task | str,
    submission: Path | str,
    options: GradeOptions | None = None,
    *,
    device: torch.device | str | None = None,
    secret: int | None = None,
    keep_job: Path | None = None,
) -> GradeResult:
    """Grade `submission` (a Python file defining `kernel`) against `task`.

    `options` (a `GradeOptions`; None: the defaults) says what is asked for; `device` is where it
    runs (default: the first GPU, else the CPU; executors place grades themselves). `secret` is
    mixed into every trial's seed (a fresh one per call when omitted); `keep_job` copies the job
    folder there for debugging. Of the options: `limits`
    overrides the sandbox's resource limits; `audit=False` skips the static
    audit (to prove the runtime defences hold on their own). `bench` times
    every benchmark shape of the task (each also checked) instead of its first
    public shape; by default it is on for a GPU and off on CPU (the interpreter
    is far too slow for benchmark shapes). `timing` sets the warm-up and
    stopping rule (default: TimingPolicy.for_device); `timing_reps` overrides
    its first round's size. A GPU grade holds its GPU for all its jobs and
    baselines (`gym.devices.lock`): no two timed grades share one.
    `contract` names a preset (gym.tasks.contract_presets, e.g. "kernelbench") graded
    against instead of the task's own contract; the result records it. `late_calls` (on by default; off only to measure what it costs) adds the
    late calls of `plan.add_late_calls`; `audit_hooks=False` leaves out the
    worker's run-time audit hooks (tests use it, with `audit=False`, to prove
    the sandbox holds on its own). `warm` (on by default) takes each job's worker from
    the warm pool when one for this sandbox and device is ready (`gym.sandbox.warm_pool`;
    without a pool, or with `warm=False`, every job starts its worker cold).
    `fresh_baselines` re-measures the reference baselines instead of reusing cached ones.
    `replay` (on by default; off only to measure what it costs) has every job's witness replay
    the calls' kernels alone on fresh inputs (gym.grading.judging.replay); the witness also counts one
    public trial's traffic, modelled on `gpu_profile` (gym.grading.signal.traffic_model), and on a GPU
    profiles one replay (`profile="ncu"` asks for Nsight Compute's figures as well); `signal=False`
    skips that count and profile (only to measure what they cost: scripts/bench_traffic.py).
    `confirm` (on by default) re-grades a pass whose speedup is implausible by `confirm_threshold`
    (gym.grading.confirm; default: above 3x vs torch.compile, or past speed of light) once, with a
    fresh secret (derived from `secret` when given) and so other inputs in another call order,
    before it is returned: a speedup the re-grade does not reproduce (a pass with at least half of
    it) makes the grade `rejected` with the flag `speedup_not_reproduced`. The re-grade is never
    re-checked itself.
    """

    chosen = options or GradeOptions()

    def once(grade_secret: int | None, kept: Path | None) -> GradeResult:
        return _grade_once(task, submission, chosen, device=device, secret=grade_secret, keep_job=kept)

    first = once(secret, keep_job)
    if not chosen.confirm:
        return first
    # The re-grade's job folder, when kept, goes next to the first one's.
    kept_again = keep_job.with_name(keep_job.name + "-confirmation") if keep_job is not None else None
    return confirmed(first, lambda: once(confirmation_secret(secret), kept_again), chosen.confirm_threshold or DEFAULT_THRESHOLD)
