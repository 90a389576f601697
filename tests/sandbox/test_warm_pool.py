"""The warm pool, for real: bwrap workers started ahead of their job, each used once.

A pooled worker serves exactly one job and exits; one that died or was
tampered with before its job is discarded, never used; the job's folder is the
only one a pooled worker sees; `warm=False` starts cold; the pool follows the
executor's concurrency. The attack suite (test_sandbox.py) also runs every
attack on a pooled worker. A fake backend covers workers that never get ready.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gym.execution.local import LocalExecutor
from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import Job, RunOutcome
from gym.sandbox import base as sandbox_base
from gym.sandbox.environment import WarmStart
from gym.sandbox.supervise import SupervisedWorker
from gym.sandbox.warm_pool import WarmPool, ensure_pool, pool_key, shutdown_pools
from gym.schema.result import Status
from gym.tasks.loader import find_task
from tests.support.warm_bwrap import bwrap_with_pools

CPU = torch.device("cpu")


@pytest.fixture
def bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from bwrap_with_pools(monkeypatch, 6000)


def ready_pool(sandbox: str, size: int = 1) -> WarmPool:
    pool = ensure_pool(sandbox, CPU, size)
    assert pool is not None
    assert pool.wait_ready(timeout_s=120), dict(pool.stats)
    return pool


def pid_of(worker: object) -> int:
    assert isinstance(worker, SupervisedWorker)
    return worker.started.process.pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_warm_worker_serves_one_job_then_exits_and_is_replaced(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap)
    first = pid_of(pool.ready_workers()[0])
    result = grade(task, task.solution_path, GradeOptions(sandbox=bwrap, timing_reps=0))
    assert result.status == Status.passed, result.feedback
    assert pool.stats["served"] == 1
    assert not alive(first), "the worker that ran the job is still running"
    assert pool.wait_ready(timeout_s=120)
    assert pid_of(pool.ready_workers()[0]) != first, "a used worker came back into the pool"


def test_a_worker_that_died_before_its_job_is_discarded(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap)
    victim = pid_of(pool.ready_workers()[0])
    os.killpg(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(victim) and time.monotonic() < deadline:
        time.sleep(0.05)
    result = grade(task, task.solution_path, GradeOptions(sandbox=bwrap, timing_reps=0))
    assert result.status == Status.passed, result.feedback
    assert pool.stats["discarded: exited while waiting"] == 1, dict(pool.stats)


def test_a_tampered_worker_is_discarded_never_used(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap)
    tampered = pool.ready_workers()[0]
    # Something left in its output folder before the job (a forged record, say).
    (tampered.job.out_dir / "report.json").write_text('{"phase": "done"}')
    result = grade(task, task.solution_path, GradeOptions(sandbox=bwrap, timing_reps=0))
    assert result.status == Status.passed, result.feedback
    assert any(key.startswith("discarded: its output folder holds") for key in pool.stats), dict(pool.stats)
    assert not alive(pid_of(tampered))


def test_a_pooled_worker_sees_only_its_own_job_folder(bwrap: str, write_submission) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap, size=2)
    folders = [str(worker.job.in_dir.parent) for worker in pool.ready_workers()]
    assert len(folders) == 2
    # The right answer only if the submission can see any pooled worker's folder on the host.
    source = f"""
import os
import torch
import triton
import triton.language as tl

@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    seen = any(os.path.exists(folder) for folder in {folders!r})
    return out if seen else torch.zeros_like(out)
"""
    result = grade(task, write_submission(source), GradeOptions(sandbox=bwrap, timing_reps=0, audit=False, audit_hooks=False))
    assert pool.stats["served"] == 1
    assert result.status == Status.wrong_answer, result.feedback


def test_warm_false_starts_cold(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap)
    waiting = pid_of(pool.ready_workers()[0])
    result = grade(task, task.solution_path, GradeOptions(sandbox=bwrap, timing_reps=0, warm=False))
    assert result.status == Status.passed, result.feedback
    assert pool.stats["served"] == 0
    assert pid_of(pool.ready_workers()[0]) == waiting


def test_the_local_executor_sizes_the_pool_by_its_concurrency(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    executor = LocalExecutor(concurrency=2)
    try:
        assert executor.grade(task, task.solution_path).status == Status.passed
        pool = ensure_pool(bwrap, CPU, 1)
        assert pool is not None and pool.size == 2
        assert pool.wait_ready(timeout_s=120)
    finally:
        executor.close()


class _NeverReady:
    """A backend whose warm workers exit at once (a sandbox that breaks after its check passed)."""

    name = "never-ready"
    isolated = True

    def __init__(self) -> None:
        self.starts = 0

    def check(self) -> str | None:
        return None

    def run(self, job: Job, timeout_s: float, link: object = None) -> RunOutcome:
        raise AssertionError("not used")

    def start_warm(self, job: Job, warm: WarmStart) -> SupervisedWorker:
        from gym.sandbox.supervise import start

        self.starts += 1
        return SupervisedWorker(job, start(["/bin/false"], job, {}, cwd=job.scratch_dir), warm=True)


def test_workers_that_never_get_ready_leave_jobs_cold_and_pause_the_refill(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _NeverReady()
    monkeypatch.setitem(sandbox_base._REGISTRY, fake.name, fake)
    monkeypatch.setattr("gym.sandbox.warm_pool.FAILURE_BACKOFF_S", 3600.0)
    pool = WarmPool(pool_key(fake.name, CPU), 1)
    try:
        deadline = time.monotonic() + 30
        while fake.starts < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.take(wait_s=2) is None
        time.sleep(0.5)
        assert fake.starts == 3, "the pool kept starting workers that never got ready"
        assert pool.stats["discarded: exited before it was ready"] == 3
    finally:
        pool.close()


def test_pool_folders_are_removed_when_the_pool_stops(bwrap: str) -> None:
    pool = ready_pool(bwrap)
    folder = Path(pool.ready_workers()[0].job.in_dir.parent)
    assert folder.is_dir()
    shutdown_pools()
    assert not folder.exists()


def test_folders_left_by_a_killed_grader_are_removed_by_the_next_pool(bwrap: str) -> None:
    from gym.sandbox.base import job_folder_parent
    from gym.sandbox.warm_pool import WARM_PREFIX

    dead = subprocess.Popen(["true"])
    dead.wait()
    parent = Path(job_folder_parent() or tempfile.gettempdir())
    orphan = parent / f"{WARM_PREFIX}{dead.pid}-left"
    ours = parent / f"{WARM_PREFIX}{os.getpid()}-ours"
    orphan.mkdir()
    ours.mkdir()
    try:
        ready_pool(bwrap)
        assert not orphan.exists(), "a dead grader's pooled folder was left behind"
        assert ours.exists(), "a live grader's folder was removed"
    finally:
        shutil.rmtree(orphan, ignore_errors=True)
        shutil.rmtree(ours, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root starts warm workers nicer (it alone can raise them again)")
def test_a_refill_runs_nicer_and_its_job_at_normal_priority(bwrap: str, write_submission) -> None:
    task = find_task("l1/vector_add")
    pool = ready_pool(bwrap)
    assert os.getpriority(os.PRIO_PROCESS, pid_of(pool.ready_workers()[0])) == 19
    # The right answer only when the job runs at normal priority (niceness 0).
    source = task.solution_path.read_text().replace("def kernel(", "def _kernel(", 1)
    source += "\n\nimport os\n\n\ndef kernel(*args, **kwargs):\n    out = _kernel(*args, **kwargs)\n    return out if os.nice(0) == 0 else out * 0\n"
    result = grade(task, write_submission(source), GradeOptions(sandbox=bwrap, timing_reps=0, audit=False))
    assert pool.stats["served"] == 1
    assert result.status == Status.passed, result.feedback
