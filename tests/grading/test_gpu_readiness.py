"""GPU-path logic, tested on CPU with fakes where a GPU would be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from gym.grading import grader
from gym.grading.job import GradeInProgress
from gym.grading.plan import plan_trials, timed_trial
from gym.grading.timing_policy import StopReason, TimingPolicy
from gym.grading.timing_rounds import TimingRounds, run_rounds
from gym.sandbox import Limits
from gym.tasks.loader import find_task


def test_driver_version_comes_from_nvidia_smi_not_torchs_cuda_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --query-gpu=driver_version ] && echo 565.57.01 && echo 565.57.01\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    grader.driver_version.cache_clear()
    try:
        assert grader.driver_version() == "565.57.01"
        monkeypatch.setenv("PATH", "/nonexistent")
        grader.driver_version.cache_clear()
        assert grader.driver_version() is None
    finally:
        grader.driver_version.cache_clear()


class _NoJobs:
    """A sandbox that fails the test if a job is started."""

    def run(self, job, timeout_s):  # noqa: ANN001, ANN201
        raise AssertionError("no timing round should start")


def test_the_first_stopping_decision_counts_the_first_jobs_cost() -> None:
    task = find_task("l1/vector_add")
    device = torch.device("cpu")
    policy = TimingPolicy(min_reps=2, max_reps=100, budget_s=5.0, target_rse=1e-9)
    trials = plan_trials(task, device, secret=7, timing_reps=2)
    trial = timed_trial(trials)
    assert trial is not None
    grade = GradeInProgress(
        task=task, submission=task.solution_path, device=device, secret=7, policy=policy, limits=Limits(),
        sandbox=_NoJobs(), sandbox_name="process", timeout_s=60,  # type: ignore[arg-type]
    )
    # Noisy samples (RSE far above the target), a first job that took longer than the whole budget:
    # a further round cannot fit, so none starts.
    first = TimingRounds(samples=[1.0, 3.0], argsets=[{}, {}])
    rounds = run_rounds(grade, trial, None, first, first_cost_s=6.0)
    assert rounds.stop == StopReason.budget and rounds.rounds == 1
