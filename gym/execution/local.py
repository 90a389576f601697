"""`local`: grades on this host, each on a device of its own, with warm sandboxes.

Concurrency defaults to the GPUs on a GPU host and the cores on CPU
(`gym.execution.devices.default_concurrency`). Each grade leases one device
from the pool for its whole duration (its jobs, its baselines), so no two
timed grades share a GPU; the warm pool keeps one started worker per
concurrent grade and device, refilled in the background.
"""

from __future__ import annotations

import threading
from pathlib import Path

from gym.execution.devices import DevicePool, DeviceSlot, default_concurrency, host_devices
from gym.execution.executor import GradeOptions
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
            from gym.sandbox.warm_pool import ensure_pool

            for slot in slots:
                ensure_pool(self.options.sandbox, slot.device, size=self.pool.grades_per_device(slot), owner=self)

    def grade(self, task: Task, submission: Path, options: GradeOptions | None = None) -> GradeResult:
        from gym.grading.grader import grade

        chosen = options or self.options
        keywords = chosen.grade_keywords()
        keywords["warm"] = keywords["warm"] and self.warm
        with self.pool.lease() as slot:
            if keywords["warm"]:
                from gym.sandbox.warm_pool import ensure_pool

                ensure_pool(chosen.sandbox, slot.device, size=self.pool.grades_per_device(slot), owner=self)
            return grade(task, submission, device=slot.device, **keywords)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        if self.warm:
            from gym.sandbox.warm_pool import release_pools

            release_pools(self)
