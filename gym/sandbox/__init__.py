"""Where submitted code runs: one interface, backends registered by name.

The grader only ever calls `get_sandbox(name).run(job, timeout_s)`. Backends:
`bwrap` (default), `docker`, and `process` (unsafe, debugging only).
"""

from gym.errors import SandboxUnavailable
from gym.sandbox import bwrap as _bwrap  # noqa: F401 - registers "bwrap"
from gym.sandbox import docker_backend as _docker  # noqa: F401 - registers "docker"
from gym.sandbox import process as _process  # noqa: F401 - registers "process"
from gym.sandbox.base import Job, Limits, RunOutcome, Sandbox, available_sandboxes, get_sandbox
from gym.sandbox.staging import stage_worker

DEFAULT_SANDBOX = "bwrap"

__all__ = [
    "DEFAULT_SANDBOX",
    "Job",
    "Limits",
    "RunOutcome",
    "Sandbox",
    "SandboxUnavailable",
    "available_sandboxes",
    "get_sandbox",
    "stage_worker",
]
