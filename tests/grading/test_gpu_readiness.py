"""GPU-path logic, tested on CPU with fakes where a GPU would be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from gym.grading import grader
from gym.grading.planning.plan import TimingRequest, plan_trials, timed_trial
from gym.grading.running.job import GradeInProgress
from gym.grading.timing.timing_policy import StopReason, TimingPolicy
from gym.grading.timing.timing_rounds import ShapeRounds, TimingRounds, run_rounds
from gym.sandbox import Limits
from gym.tasks.loader import find_task


def test_driver_version_comes_from_nvidia_smi_not_torchs_cuda_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text('#!/bin/sh\n[ "$1" = --query-gpu=driver_version ] && echo 565.57.01 && echo 565.57.01\n')
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

    def run(self, job, timeout_s, link=None):
        raise AssertionError("no timing round should start")


def test_the_first_stopping_decision_counts_the_first_jobs_cost() -> None:
    task = find_task("l1/vector_add")
    device = torch.device("cpu")
    policy = TimingPolicy(min_reps=2, max_reps=100, budget_s=5.0, target_rse=1e-9)
    trials = plan_trials(task, device, secret=7, timing=TimingRequest(reps=2))
    trial = timed_trial(trials)
    assert trial is not None
    grade = GradeInProgress(
        task=task,
        submission=task.solution_path,
        device=device,
        secret=7,
        policy=policy,
        limits=Limits(),
        sandbox=_NoJobs(),
        sandbox_name="process",
        timeout_s=60,  # type: ignore[arg-type]
    )
    # Noisy samples (RSE far above the target), a first job that took longer than the whole budget:
    # a further round cannot fit, so none starts.
    first = TimingRounds(shapes=[ShapeRounds(trial=trial, warmup=None, samples=[1.0, 3.0])])
    rounds = run_rounds(grade, first, first_cost_s=6.0)
    assert rounds.shapes[0].stop == StopReason.budget and rounds.rounds == 1


def test_outputs_read_on_the_cpu_are_moved_to_the_expected_outputs_device() -> None:
    from gym.grading.running.job_files import on_device_of

    # `meta` stands in for a GPU: a tensor there and one on the CPU cannot be compared.
    expected = [torch.empty(3, device="meta"), torch.empty(2, device="meta")]
    outputs = [torch.ones(3), torch.zeros(2)]
    moved = on_device_of(outputs, expected)
    assert [t.device.type for t in moved] == ["meta", "meta"]
    assert [t.shape for t in moved] == [torch.Size([3]), torch.Size([2])]
    same = on_device_of(outputs, [torch.empty(3)])
    assert same[0] is outputs[0]
    with pytest.raises(RuntimeError):
        torch.ones(3) == torch.empty(3, device="meta")  # noqa: B015 - what the judge used to hit on a GPU


def test_jiterator_is_refused_by_the_audit_and_tripped_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from gym.grading.intake.audit import audit_source
    from gym.grading.judging.integrity import call_violations
    from gym.worker import op_trace
    from gym.worker.protocol import CallRecord
    from gym.worker.torch_policy import HIDDEN_LAUNCH_OP

    for source in ("import torch\nf = torch.cuda.jiterator._create_jit_fn('x')\n", "from torch.cuda import jiterator\n", "import torch.cuda.nccl\n"):
        assert any(f.rule in {"stream", "import", "torch"} for f in audit_source(source)), source
    # A CPU build has no jiterator entry: stand one in, as a CUDA build has it.
    calls = []
    monkeypatch.setattr(torch._C, "_cuda_jiterator_compile_and_launch_kernel", lambda *a, **k: calls.append(a) or "launched", raising=False)
    op_trace.install_hidden_launch_tripwire()
    trace = op_trace.OpTrace()
    with op_trace.traced(trace):
        assert torch._C._cuda_jiterator_compile_and_launch_kernel("code", 1) == "launched"
    assert calls and trace.ops[HIDDEN_LAUNCH_OP] == 1
    record = CallRecord(id=0, ok=True, torch_ops=dict(trace.ops), launches={"_decoy": 1})
    assert "tripwire:hidden_gpu_launch" in [v.flag for v in call_violations(record, [])]
