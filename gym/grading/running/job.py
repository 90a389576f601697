"""A grade in progress, and the one way a job runs: write the job folder, run
the worker in the sandbox, judge what it wrote. The grading job and every
further timing round go through `run_job`."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from gym.devices.lock import device_index
from gym.grading.judging.judge import JobVerdict, judge
from gym.grading.judging.replay import ReplayPhase
from gym.grading.planning.plan import Trial
from gym.grading.running.job_files import JobCalls, JobContents, write_job
from gym.grading.timing.timing_policy import TimingPolicy
from gym.sandbox import Job, Limits, RunOutcome, Sandbox
from gym.sandbox.base import job_folder_parent
from gym.sandbox.warm_pool import PooledJob, copy_cache, take_warm
from gym.schema.result import Dsl, Status
from gym.tasks.kernelbench import runtime as kernelbench
from gym.tasks.model import Task
from gym.worker.launched_modules import LAUNCHED_DIR
from gym.worker.tape import tape_file


@dataclass
class GradeInProgress:
    """Everything one grade's jobs share."""

    # The task being graded.
    task: Task
    # The submission file (copied into each job).
    submission: Path
    # The device the candidate and the reference run on.
    device: torch.device
    # Mixed into every trial's seed; never leaves the trusted side.
    secret: int
    # Warm-up and stopping rule.
    policy: TimingPolicy
    # Resource limits of each job's sandbox.
    limits: Limits
    # The sandbox backend and its name (as the environment fingerprint records it).
    sandbox: Sandbox
    sandbox_name: str
    # Wall-clock limit of each job, seconds.
    timeout_s: float
    # The worker's Triton cache, shared by this grade's jobs only (compiled once, not once per timing round).
    triton_cache: Path | None = None
    # Install the worker's run-time audit hooks (off only to test the sandbox on its own).
    audit_hooks: bool = True
    # Take each job's worker from the warm pool when one is ready (gym.sandbox.warm_pool).
    warm: bool = True
    # Re-measure the reference baselines instead of reusing cached ones.
    fresh_baselines: bool = False
    # The submission's kernels file (gym.grading.intake.kernel_source): every job replays tapes with it; None: no replay.
    kernels: str | None = None
    # The submission's kernel language (gym.grading.intake.dsl): "helion" has the worker load Helion first.
    dsl: Dsl = "triton"
    # `profile="ncu"`: the profiled replay is also run under Nsight Compute (GPU only; gym.worker.ncu).
    ncu: bool = False
    # Whether the first job's witness counts traffic and profiles (the training signal); off only to measure its cost.
    signal: bool = True


def gpu_index(device: torch.device) -> int | None:
    """The host index of the one GPU a job on `device` may see (None on CPU)."""
    return device_index(device) if device.type == "cuda" else None


def run_job(grade: GradeInProgress, calls: JobCalls, *, keep_job: Path | None = None, prefix: str = "kgym-job-", signal: bool = False) -> JobVerdict:
    """Run `calls` as one sandboxed job and judge it; `keep_job` copies the job folder there.

    The worker is a warm one from the pool when `grade.warm` and one is ready
    (`gym.sandbox.warm_pool`), else started cold; the job is the same either way. `signal` has
    the witness count one public trial's traffic and profile one replay (the grade's first job)."""
    pooled = take_warm(grade.sandbox_name, grade.device, grade.limits) if grade.warm else None
    if pooled is not None:
        with pooled:
            return _run_warm(grade, pooled, calls, keep_job, signal)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=job_folder_parent()) as tmp:
        job = Job.in_folder(Path(tmp), grade.device.type, grade.limits, gpu_index=gpu_index(grade.device), triton_cache=grade.triton_cache)
        layout = _write(grade, job, calls)
        replay, early = _replay_phase(grade, job, layout, signal)
        outcome = grade.sandbox.run(job, grade.timeout_s, replay)
        result = _judged(grade, job, layout, outcome, replay, early)
        if keep_job is not None:
            shutil.copytree(tmp, keep_job, dirs_exist_ok=True)
    return result


# What the submission's records say when its process exited normally (judged before the replay).
_ENDED = RunOutcome(exit_code=0, timed_out=False, wall_s=0.0, stdout_tail="", stderr_tail="")


@dataclass
class _Early:
    """The judgement of the submission's own records, made once its process is gone (they are final
    then): it decides whether a replay is worth running, and stands for the job's when the job
    ended as `_ENDED` assumed."""

    grade: GradeInProgress
    job: Job
    layout: list[tuple[Trial, list[int]]]
    result: JobVerdict | None = None

    def may_pass(self) -> bool:
        self.result = judge(self.layout, self.job, _ENDED, self.grade.device, self.grade.task.spec.allowed_torch, also_expected=_tapes(self.layout))
        return self.result.verdict.status == Status.passed

    def seconds_by_call(self) -> dict[int, float]:
        """The candidate's timed seconds by call id, as `may_pass` read them (empty before)."""
        return dict(self.result.seconds_by_call) if self.result is not None else {}

    def reusable(self, outcome: RunOutcome) -> JobVerdict | None:
        ended_normally = outcome.exit_code == 0 and not outcome.timed_out and outcome.limit_hit is None and outcome.infra_failure is None
        return self.result if ended_normally else None


def _replay_phase(grade: GradeInProgress, job: Job, layout: list[tuple[Trial, list[int]]], signal: bool = False) -> tuple[ReplayPhase | None, _Early]:
    early = _Early(grade, job, layout)
    if grade.kernels is None:
        return None, early
    phase = ReplayPhase(
        task=grade.task,
        device=grade.device,
        secret=grade.secret,
        layout=layout,
        in_dir=job.in_dir,
        staging=job.scratch_dir / "replay-staging",
        may_pass=early.may_pass,
        candidate_seconds=early.seconds_by_call,
        signal=signal,
        ncu=signal and grade.ncu,
        memory_bytes=grade.limits.memory_bytes,
        tapes_dir=job.out_dir,
    )
    return phase, early


def _tapes(layout: list[tuple[Trial, list[int]]]) -> frozenset[str]:
    """What the worker writes besides its records: each call's tape, and the sources of the modules
    its launches came from (gym.worker.launched_modules)."""
    return frozenset(tape_file(call_id) for _, ids in layout for call_id in ids) | {LAUNCHED_DIR}


def _judged(
    grade: GradeInProgress, job: Job, layout: list[tuple[Trial, list[int]]], outcome: RunOutcome, replay: ReplayPhase | None, early: _Early
) -> JobVerdict:
    """The job's verdict: the submission's own records, then (for a verdict that would pass) its replay."""
    allowed = grade.task.spec.allowed_torch
    expected = _tapes(layout)
    if replay is not None and replay.out_name:
        expected |= {replay.out_name}
    result = early.reusable(outcome) or judge(layout, job, outcome, grade.device, allowed, also_expected=expected)
    if replay is not None and outcome.infra_failure is None:
        replay.judge(result.verdict, job.out_dir, outcome.timed_out, allowed, result.seconds_by_call)
        replay.cleanup()
        if result.verdict.status == Status.passed and not replay.skipped:
            # The speed that counts is the witness's (gym.grading.judging.replay.ReplayPhase.replayed_speed).
            result.timed_by_trial = replay.replayed_speed(result.timed_by_trial, result.seconds_by_call)
            result.timed_seconds = [seconds for samples in result.timed_by_trial.values() for seconds in samples]
    return result


def _write(grade: GradeInProgress, job: Job, calls: JobCalls, stage: bool = True) -> list[tuple[Trial, list[int]]]:
    contents = JobContents(
        submission=grade.submission,
        calls=calls,
        warmup_s=grade.policy.warmup_s,
        audit_hooks=grade.audit_hooks,
        module_form=kernelbench.module_form(grade.task),
        kernels=grade.kernels,
        dsl=grade.dsl,
    )
    return write_job(job, contents, stage=stage)


def _run_warm(grade: GradeInProgress, pooled: PooledJob, calls: JobCalls, keep_job: Path | None, signal: bool = False) -> JobVerdict:
    """The job on a warm worker: its folder already holds the worker's code; the grade's Triton cache moves in and back out."""
    job = pooled.job
    if grade.triton_cache is not None and job.triton_cache is not None:
        copy_cache(grade.triton_cache, job.triton_cache, grade.limits.scratch_bytes)
    layout = _write(grade, job, calls, stage=False)
    replay, early = _replay_phase(grade, job, layout, signal)
    outcome = pooled.worker.run(grade.timeout_s, replay)
    result = _judged(grade, job, layout, outcome, replay, early)
    if grade.triton_cache is not None and job.triton_cache is not None:
        copy_cache(job.triton_cache, grade.triton_cache, grade.limits.scratch_bytes)
    if keep_job is not None:
        shutil.copytree(pooled.root, keep_job, dirs_exist_ok=True)
    return result
