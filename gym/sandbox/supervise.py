"""Start a worker command, watch it, and kill its whole process tree at the deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from gym.sandbox.base import TAIL, Job, RunOutcome

POLL_S = 0.05


def folder_bytes(folder: Path) -> int:
    total = 0
    for entry in os.scandir(folder):
        try:
            if entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
            elif entry.is_dir(follow_symlinks=False):
                total += folder_bytes(Path(entry.path))
        except OSError:
            continue
    return total


def read_tail(path: Path) -> str:
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - TAIL))
        return handle.read().decode(errors="replace")


def kill_group(pid: int) -> None:
    """Kill the process group led by `pid` (the worker leads its own session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def watch(running: Callable[[], bool], job: Job, timeout_s: float, start: float) -> tuple[bool, str | None]:
    """Poll `running()` until it is False, the deadline passes, or the output folder
    outgrows the job's limit; returns (timed_out, limit_hit)."""
    next_size_check = 0.0
    while running():
        now = time.monotonic()
        if now - start > timeout_s:
            return True, None
        if now >= next_size_check:
            next_size_check = now + 0.5
            if folder_bytes(job.out_dir) > job.limits.output_bytes:
                return False, "output"
        time.sleep(POLL_S)
    return False, None


def supervise(
    command: list[str],
    job: Job,
    env: dict[str, str],
    timeout_s: float,
    cwd: Path,
    preexec: Callable[[], None] | None = None,
    on_kill: Callable[[], None] | None = None,
) -> RunOutcome:
    """Run `command`, stdout/stderr to files in the job's scratch dir.

    Kills the process group (and calls `on_kill` for trees outside it) when
    the deadline passes or the output folder grows past the job's limit.
    """
    start = time.monotonic()
    stdout_path, stderr_path = job.scratch_dir / "worker.stdout", job.scratch_dir / "worker.stderr"
    timed_out, limit_hit = False, None
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=preexec,
        )
        try:
            timed_out, limit_hit = watch(lambda: process.poll() is None, job, timeout_s, start)
        finally:
            kill_group(process.pid)
            if on_kill is not None:
                on_kill()
            process.wait()
    return RunOutcome(
        exit_code=process.returncode,
        timed_out=timed_out,
        wall_s=time.monotonic() - start,
        stdout_tail=read_tail(stdout_path),
        stderr_tail=read_tail(stderr_path),
        limit_hit=limit_hit,
    )
