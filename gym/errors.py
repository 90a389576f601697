"""The gym's one exception root.

Every exception the gym raises on purpose derives from `KernelGymError`, which
carries the HTTP status a server answers with when it escapes a request
(`http_status`). The sandbox side (`gym.worker`) imports nothing from the gym
and keeps its own two internal exceptions.
"""

from __future__ import annotations

from typing import ClassVar


class KernelGymError(Exception):
    """Base of every gym error. `http_status` is what the HTTP server answers when one escapes a request."""

    http_status: ClassVar[int] = 500
