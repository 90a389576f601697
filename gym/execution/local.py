"""`local`: grades on this host, each on a device of its own, with warm sandboxes.

Concurrency defaults to the GPUs on a GPU host and the cores on CPU
(`gym.devices.pool.default_concurrency`). Each grade leases one device
from the pool for its whole duration (its jobs, its baselines), so no two
timed grades share a GPU; the warm pool keeps one started worker per
concurrent grade and device, refilled in the background.
"""

from __future__ import annotations

import threading
from pathlib import Path

from gym.devices.pool import DevicePool, DeviceSlot, default_concurrency, host_devices
from gym.execution.executor import executor_grader
from gym.grading import grader
from gym.grading.grader import Grader
from gym.grading.options import GradeOptions
from gym.sandbox.warm_pool import ensure_pool, release_pools
from gym.schema.result import GradeResult
from gym.tasks.model import Task


class LocalExecutor:
    name = "local"

    def __init__(
        self,
        *,
        concurrency: int | None = None,
        devices: list[DeviceSlot] | None = None,
        warm: bool = True,
        options: GradeOptions | None = None,
    ) -> None:
        slots = devices if devices is not None else host_devices()
        self.concurrency = concurrency if concurrency is not None else default_concurrency(slots)
        self.pool = DevicePool(slots, self.concurrency)
        self.warm = warm
        self.options = options or GradeOptions()
        self._closed = threading.Event()
        if warm:
            # Started ahead of need: the first grades find their workers ready (or nearly).
            for slot in slots:
                ensure_pool(self.options.sandbox, slot.device, size=self.pool.grades_per_device(slot), owner=self)

    def grade(
        self, task: Task | str, submission: Path, options: GradeOptions | None = None, *, keep_job: Path | None = None, secret: int | None = None
    ) -> GradeResult:
        """The Executor's grade; this executor's own extras: `keep_job` copies the job folder there (`kgym grade
        --keep-job`), `secret` is the grade's secret (`kgym grade --secret`; default: a fresh one)."""
        chosen = options or self.options
        if chosen.warm and not self.warm:
            chosen = chosen.model_copy(update={"warm": False})
        with self.pool.lease() as slot:
            if chosen.warm:
                ensure_pool(chosen.sandbox, slot.device, size=self.pool.grades_per_device(slot), owner=self)
            # Looked up on the module at each call, so a test can stand in for the grader.
            return grader.grade(task, submission, chosen, device=slot.device, keep_job=keep_job, secret=secret)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        if self.warm:
            release_pools(self)


def local_grader(options: GradeOptions | None = None, concurrency: int = 1, devices: list[DeviceSlot] | None = None) -> Grader:
    """A grader on this host through a `local` executor of its own (cold workers, `concurrency` grades at
    once, on `devices`, default the host's): what `Env`, `kgym serve`, `kgym mcp` and `run_agent` grade
    with when given no executor."""
    return executor_grader(LocalExecutor(concurrency=concurrency, devices=devices, warm=False), options or GradeOptions())
