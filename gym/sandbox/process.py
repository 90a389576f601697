"""`process`: a plain subprocess with rlimits. Not isolation: for debugging only."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from gym.sandbox.base import TAIL, Job, RunOutcome, register

# Limits applied in the child before exec.
FILE_SIZE_LIMIT = 4 << 30
OPEN_FILES_LIMIT = 1024


def worker_environment(job: Job) -> dict[str, str]:
    """A minimal environment: no secrets, no user config; the interpreter on CPU."""
    package_parent = str(Path(__file__).resolve().parents[2])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(job.scratch_dir),
        "TMPDIR": str(job.scratch_dir),
        "TRITON_CACHE_DIR": str(job.scratch_dir / "triton"),
        "PYTHONPATH": package_parent,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "LANG": "C.UTF-8",
    }
    if job.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    for name in ("CUDA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES_LIMIT, OPEN_FILES_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_command(command: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> RunOutcome:
    """Run `command` in its own session; on timeout kill the whole process group."""
    start = time.monotonic()
    stdout_path, stderr_path = cwd / "worker.stdout", cwd / "worker.stderr"
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_limit_child,
        )
        timed_out = False
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(process.pid)
            process.wait()
    return RunOutcome(
        exit_code=process.returncode,
        timed_out=timed_out,
        wall_s=time.monotonic() - start,
        stdout_tail=read_tail(stdout_path),
        stderr_tail=read_tail(stderr_path),
    )


def _kill_group(pid: int) -> None:
    """Kill the worker and everything it started (it leads its own session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def read_tail(path: Path) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - TAIL))
        return handle.read().decode(errors="replace")


class ProcessSandbox:
    name = "process"
    isolated = False

    def check(self) -> str | None:
        return None

    def run(self, job: Job, timeout_s: float) -> RunOutcome:
        command = [sys.executable, "-m", "gym.worker", str(job.in_dir), str(job.out_dir)]
        return run_command(command, worker_environment(job), job.scratch_dir, timeout_s)


register(ProcessSandbox())
