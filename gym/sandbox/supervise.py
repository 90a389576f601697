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


# What one entry costs at least (a file system block): a million empty files is not free.
ENTRY_BYTES = 4096


def folder_bytes(folder: Path) -> int:
    """What the entries under `folder` take on disk, counting each at least ENTRY_BYTES
    (links not followed; iterative, so deeply nested folders cannot overflow the stack)."""
    total = 0
    pending = [str(folder)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                size = entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else 0
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
            except OSError:
                size = 0
            total += max(size, ENTRY_BYTES)
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


def size_limit_hit(job: Job) -> str | None:
    """Which host folder the worker writes to has outgrown its cap: "output" (OUT past
    output_bytes), "triton_cache" (the shared Triton cache past scratch_bytes, the size of
    the private scratch it replaces), else None."""
    if folder_bytes(job.out_dir) > job.limits.output_bytes:
        return "output"
    if job.triton_cache is not None and job.triton_cache.is_dir() and folder_bytes(job.triton_cache) > job.limits.scratch_bytes:
        return "triton_cache"
    return None


def watch(running: Callable[[], bool], job: Job, timeout_s: float, start: float) -> tuple[bool, str | None]:
    """Poll `running()` until it is False, the deadline passes, or a folder on the host
    outgrows its cap (`size_limit_hit`); returns (timed_out, limit_hit)."""
    next_size_check = 0.0
    while running():
        now = time.monotonic()
        if now - start > timeout_s:
            return True, None
        if now >= next_size_check:
            next_size_check = now + 0.5
            limit_hit = size_limit_hit(job)
            if limit_hit is not None:
                return False, limit_hit
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
    pass_fds: tuple[int, ...] = (),
) -> RunOutcome:
    """Run `command`, stdout/stderr to files in the job's scratch dir (`pass_fds` stay open in it).

    Kills the process group (and calls `on_kill` for trees outside it) when
    the deadline passes or the output folder (or the shared Triton cache)
    grows past its limit, and in any case once the command has exited.
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
            pass_fds=pass_fds,
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
