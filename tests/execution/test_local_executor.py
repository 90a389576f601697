"""The local executor, for real: grades through it (bwrap, warm workers), `Env` and `grade_many`
over it, and each grade placed on the device slot the pool leased it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gym.devices.pool import DeviceSlot
from gym.execution import GradeOptions, make_executor
from gym.execution.batch import grade_many
from gym.execution.local import LocalExecutor
from gym.harness.env import Env
from gym.sandbox.warm_pool import ensure_pool
from gym.schema.episode import Action
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import find_task
from tests.support.warm_bwrap import bwrap_with_pools


@pytest.fixture
def bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from bwrap_with_pools(monkeypatch, 7000)


def test_an_env_steps_through_the_local_executor_on_a_warm_worker(bwrap: str) -> None:
    task = find_task("l1/vector_add")
    executor = make_executor("local", concurrency=1)
    try:
        env = Env(executor=executor, sandbox=bwrap)
        env.reset(task_id=task.id)
        observation = env.step(Action(code=task.solution_path.read_text()))
        assert observation.summary is not None and observation.summary.status == Status.passed, observation.feedback
        pool = ensure_pool(bwrap, torch.device("cpu"), 1)
        assert pool is not None and pool.stats["served"] == 1, dict(pool.stats)
    finally:
        executor.close()


def test_grade_many_through_an_executor_keeps_the_order_and_the_statuses(bwrap: str, write_submission) -> None:
    vector_add, silu = find_task("l1/vector_add"), find_task("l1/silu")
    wrong = write_submission("import torch\n\ndef kernel(x, y):\n    return torch.zeros_like(x)\n")
    executor = LocalExecutor(concurrency=2)
    try:
        results = grade_many([(vector_add, vector_add.solution_path), (silu, silu.solution_path), (vector_add, wrong)], executor=executor)
    finally:
        executor.close()
    assert [(r.task_id, r.status) for r in results] == [
        ("l1/vector_add", Status.passed),
        ("l1/silu", Status.passed),
        ("l1/vector_add", Status.rejected),
    ]


def test_each_grade_runs_on_the_slot_it_leased(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Placement only (no GPU here): two fake GPUs, four grades at once; each grade is handed its
    slot's device and no two grades hold one GPU at the same time."""
    slots = [DeviceSlot(torch.device(f"cuda:{index}"), index, "Fake GPU", f"GPU-{index}") for index in range(2)]
    running: dict[str, int] = {}
    overlaps: list[str] = []
    lock = threading.Lock()
    seen: list[str] = []

    def fake_grade(task: object, submission: Path, options: GradeOptions, *, device: torch.device, **keywords: object) -> GradeResult:
        with lock:
            running[str(device)] = running.get(str(device), 0) + 1
            if running[str(device)] > 1:
                overlaps.append(str(device))
            seen.append(str(device))
        threading.Event().wait(0.05)
        with lock:
            running[str(device)] -= 1
        # An executor built with warm=False starts every worker cold, whatever the options say.
        assert options.warm is False
        return None  # type: ignore[return-value]

    monkeypatch.setattr("gym.grading.grader.grade", fake_grade)
    executor = LocalExecutor(devices=slots, warm=False)
    assert executor.concurrency == 2
    submission = tmp_path / "s.py"
    submission.write_text("")
    threads = [threading.Thread(target=executor.grade, args=(find_task("l1/vector_add"), submission, GradeOptions())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(seen)) == ["cuda:0", "cuda:1"] and len(seen) == 4
    assert not overlaps, f"two grades held one GPU at once: {overlaps}"
