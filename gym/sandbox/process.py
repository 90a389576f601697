"""`process`: a plain subprocess with rlimits. Not isolation: for debugging only.

A cuda job sees the host's GPUs through CUDA_VISIBLE_DEVICES only: set to its
one GPU as the host names it (entry `gpu_index` of the host's own
CUDA_VISIBLE_DEVICES when that is set), with the host's LD_LIBRARY_PATH kept
so the driver library is found where the grader found it.
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path

from gym.devices import nvidia
from gym.sandbox.base import Job, Limits, RunOutcome, WitnessLink, register
from gym.sandbox.environment import WORKER_PATH, WarmStart, runtime_python, worker_command, worker_environment
from gym.sandbox.supervise import SupervisedWorker, start
from gym.sandbox.toolchain import gpu_toolchain_problem, run_probe


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


def _python() -> Path:
    python = runtime_python()
    return python if python.exists() else Path(sys.executable)


def process_environment(job: Job, home: Path) -> dict[str, str]:
    """The worker's environment for `job`, with its scratch HOME at `home`."""
    visible = "0"
    library_path: list[str] | None = None
    if job.device == "cuda":
        visible = nvidia.host_device_entry(job.host_gpu)
        host_library_path = os.environ.get("LD_LIBRARY_PATH")
        library_path = [host_library_path] if host_library_path else None
    return worker_environment(
        job.device,
        str(home),
        str(home),
        str(job.lib_dir),
        visible_devices=visible,
        library_path=library_path,
        triton_cache=str(job.triton_cache) if job.triton_cache is not None else None,
    )


class ProcessSandbox:
    name = "process"
    isolated = False

    def check(self) -> str | None:
        python = _python()
        return gpu_toolchain_problem(("process", str(python), WORKER_PATH), lambda: run_probe([str(python)], {"PATH": WORKER_PATH}))

    def run(self, job: Job, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        return self._start(job, None).run(timeout_s, link)

    def start_warm(self, job: Job, warm: WarmStart) -> SupervisedWorker:
        return self._start(job, warm)

    def _start(self, job: Job, warm: WarmStart | None) -> SupervisedWorker:
        home = job.scratch_dir / "home"
        home.mkdir(exist_ok=True)
        env = process_environment(job, home)
        command = worker_command(str(_python()), str(job.in_dir), str(job.out_dir), warm)
        return SupervisedWorker(job, start(command, job, env, cwd=home, preexec=rlimit_setter(job.limits)), warm=warm is not None)


register(ProcessSandbox())
