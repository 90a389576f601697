"""Admission control for grades: at most `max_running` at once, at most
`max_queue` waiting; past that, `QueueFull` (the server answers 503 with
Retry-After). One queue serves /step, the WebSocket and /submissions.

Lives on one event loop: the check and the count happen without an await in
between, so no lock is needed.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gym.errors import QueueFull

# Assumed seconds per grade until one has been measured.
DEFAULT_GRADE_SECONDS = 5.0


class GradeQueue:
    def __init__(self, max_running: int, max_queue: int) -> None:
        if max_running < 1 or max_queue < 0:
            raise ValueError("max_running must be >= 1 and max_queue >= 0")
        self.max_running = max_running
        self.max_queue = max_queue
        self.running = 0
        self.waiting = 0
        self._slots = asyncio.Semaphore(max_running)
        self._recent: deque[float] = deque(maxlen=20)

    def admit(self) -> None:
        """Raise QueueFull unless a grade submitted now could run or wait."""
        if self.running + self.waiting >= self.max_running + self.max_queue:
            raise QueueFull(self.retry_after_s())

    def retry_after_s(self) -> int:
        per_grade = sum(self._recent) / len(self._recent) if self._recent else DEFAULT_GRADE_SECONDS
        return max(1, math.ceil(per_grade * (self.waiting + 1) / self.max_running))

    def reserve(self) -> None:
        """Admit (or raise QueueFull) and count the grade as waiting; follow with `reserved_slot`."""
        self.admit()
        self.waiting += 1

    @asynccontextmanager
    async def reserved_slot(self) -> AsyncIterator[None]:
        """Wait for a free slot for a grade already `reserve`d, and hold it for the block."""
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        started = time.monotonic()
        try:
            yield
        finally:
            self.running -= 1
            self._recent.append(time.monotonic() - started)
            self._slots.release()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Admit (or raise QueueFull), wait for a free slot, hold it for the block."""
        self.reserve()
        async with self.reserved_slot():
            yield
