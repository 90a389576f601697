"""A grade in progress, and the one way a job runs: write the job folder, run
the worker in the sandbox, judge what it wrote. The grading job and every
further timing round go through `run_job`."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from gym.grading.device_lock import device_index
from gym.grading.job_files import write_job
from gym.grading.judge import JobVerdict, judge
from gym.grading.plan import CallPlan, Trial
from gym.grading.timing_policy import TimingPolicy
from gym.sandbox import Job, Limits, Sandbox
from gym.sandbox.base import job_folder_parent
from gym.sandbox.warm_pool import PooledJob, copy_cache, take_warm
from gym.tasks.kernelbench import runtime as kernelbench
from gym.tasks.model import Task


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


def gpu_index(device: torch.device) -> int | None:
    """The host index of the one GPU a job on `device` may see (None on CPU)."""
    return device_index(device) if device.type == "cuda" else None


def run_job(
    grade: GradeInProgress,
    trials: list[Trial],
    *,
    shuffle_seed: int,
    warmups: list[CallPlan],
    keep_job: Path | None = None,
    prefix: str = "kgym-job-",
) -> JobVerdict:
    """Run `trials` as one sandboxed job and judge it; `keep_job` copies the job folder there.

    The worker is a warm one from the pool when `grade.warm` and one is ready
    (`gym.sandbox.warm_pool`), else started cold; the job is the same either way."""
    pooled = take_warm(grade.sandbox_name, grade.device, grade.limits) if grade.warm else None
    if pooled is not None:
        with pooled:
            return _run_warm(grade, pooled, trials, shuffle_seed, warmups, keep_job)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=job_folder_parent()) as tmp:
        job = Job.in_folder(Path(tmp), grade.device.type, grade.limits, gpu_index=gpu_index(grade.device), triton_cache=grade.triton_cache)
        layout = _write(grade, job, trials, shuffle_seed, warmups)
        outcome = grade.sandbox.run(job, grade.timeout_s)
        result = judge(layout, job, outcome, grade.device, grade.task.spec.allowed_torch)
        if keep_job is not None:
            shutil.copytree(tmp, keep_job, dirs_exist_ok=True)
    return result


def _write(
    grade: GradeInProgress, job: Job, trials: list[Trial], shuffle_seed: int, warmups: list[CallPlan], stage: bool = True
) -> list[tuple[Trial, list[int]]]:
    return write_job(
        job,
        grade.submission,
        trials,
        shuffle_seed=shuffle_seed,
        warmups=warmups,
        warmup_s=grade.policy.warmup_s,
        audit_hooks=grade.audit_hooks,
        module_form=kernelbench.module_form(grade.task),
        stage=stage,
    )


def _run_warm(grade: GradeInProgress, pooled: PooledJob, trials: list[Trial], shuffle_seed: int, warmups: list[CallPlan], keep_job: Path | None) -> JobVerdict:
    """The job on a warm worker: its folder already holds the worker's code; the grade's Triton cache moves in and back out."""
    job = pooled.job
    if grade.triton_cache is not None and job.triton_cache is not None:
        copy_cache(grade.triton_cache, job.triton_cache, grade.limits.scratch_bytes)
    layout = _write(grade, job, trials, shuffle_seed, warmups, stage=False)
    outcome = pooled.worker.run(grade.timeout_s)
    result = judge(layout, job, outcome, grade.device, grade.task.spec.allowed_torch)
    if grade.triton_cache is not None and job.triton_cache is not None:
        copy_cache(job.triton_cache, grade.triton_cache, grade.limits.scratch_bytes)
    if keep_job is not None:
        shutil.copytree(pooled.root, keep_job, dirs_exist_ok=True)
    return result
