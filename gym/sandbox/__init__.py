"""Where submitted code runs: one interface, backends registered by name.

The grader only ever calls `get_sandbox(name).run(job, timeout_s)`.
"""

from gym.sandbox import process as _process  # noqa: F401 - registers "process"
from gym.sandbox.base import (
    Job,
    RunOutcome,
    Sandbox,
    SandboxUnavailable,
    available_sandboxes,
    get_sandbox,
)

__all__ = ["Job", "RunOutcome", "Sandbox", "SandboxUnavailable", "available_sandboxes", "get_sandbox"]
