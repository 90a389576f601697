"""`process`: a plain subprocess with rlimits. Not isolation: for debugging only."""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable

from gym.sandbox.base import Job, Limits, RunOutcome, register
from gym.sandbox.environment import runtime_python, worker_command, worker_environment
from gym.sandbox.supervise import supervise


def rlimit_setter(limits: Limits) -> Callable[[], None]:
    """A preexec callable that sets the job's rlimits in the child."""

    def apply() -> None:
        for limit, value in (
            (resource.RLIMIT_DATA, limits.memory_bytes),
            (resource.RLIMIT_CPU, limits.cpu_seconds),
            (resource.RLIMIT_FSIZE, limits.file_size_bytes),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))

    return apply


class ProcessSandbox:
    name = "process"
    isolated = False

    def check(self) -> str | None:
        return None

    def run(self, job: Job, timeout_s: float) -> RunOutcome:
        home = job.scratch_dir / "home"
        home.mkdir(exist_ok=True)
        env = worker_environment(job.device, str(home), str(home), str(job.lib_dir))
        python = runtime_python()
        command = worker_command(str(python if python.exists() else sys.executable), str(job.in_dir), str(job.out_dir))
        return supervise(command, job, env, timeout_s, cwd=home, preexec=rlimit_setter(job.limits))


register(ProcessSandbox())
