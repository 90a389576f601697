"""Start a worker command, watch it, and kill its whole process tree at the deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from gym.sandbox.base import TAIL, Job, RunOutcome, WitnessLink
from gym.sandbox.staging import start_warm_job

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


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (of any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def watch(running: Callable[[], bool], job: Job, timeout_s: float, start: float, on_poll: Callable[[], None] | None = None) -> tuple[bool, str | None]:
    """Poll `running()` until it is False, the deadline passes, or a folder on the host
    outgrows its cap (`size_limit_hit`); returns (timed_out, limit_hit). `on_poll` runs on
    every poll (the witness link)."""
    next_size_check = 0.0
    while running():
        now = time.monotonic()
        if now - start > timeout_s:
            return True, None
        if on_poll is not None:
            on_poll()
        if now >= next_size_check:
            next_size_check = now + 0.5
            limit_hit = size_limit_hit(job)
            if limit_hit is not None:
                return False, limit_hit
        time.sleep(POLL_S)
    return False, None


@dataclass
class Started:
    """A worker command that is running, with its log files open (see `start`, `finish`)."""

    process: subprocess.Popen[bytes]
    stdout: IO[bytes]
    stderr: IO[bytes]
    stdout_path: Path
    stderr_path: Path


def start(
    command: list[str],
    job: Job,
    env: dict[str, str],
    cwd: Path,
    preexec: Callable[[], None] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Started:
    """Start `command` in a session of its own, stdout/stderr to files in the job's scratch dir."""
    stdout_path, stderr_path = job.scratch_dir / "worker.stdout", job.scratch_dir / "worker.stderr"
    stdout, stderr = stdout_path.open("wb"), stderr_path.open("wb")
    try:
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
    except BaseException:
        stdout.close()
        stderr.close()
        raise
    return Started(process, stdout, stderr, stdout_path, stderr_path)


def stop(started: Started, on_kill: Callable[[], None] | None = None) -> None:
    """Kill the process group (and call `on_kill` for trees outside it), reap it, close the logs."""
    try:
        kill_group(started.process.pid)
        if on_kill is not None:
            on_kill()
        started.process.wait()
    finally:
        started.stdout.close()
        started.stderr.close()


def read_all(path: Path, limit: int = 1 << 20) -> bytes:
    """The first `limit` bytes of a log file (empty when there is none)."""
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def finish(started: Started, job: Job, timeout_s: float, on_kill: Callable[[], None] | None = None, link: WitnessLink | None = None) -> RunOutcome:
    """Watch a started command until it exits, the deadline (counted from now) passes or a
    folder outgrows its cap; then kill what is left of it and report. `link` sees its stdout."""
    begin = time.monotonic()
    timed_out, limit_hit = False, None
    on_poll = (lambda: link.poll(read_all(started.stdout_path))) if link is not None else None
    try:
        timed_out, limit_hit = watch(lambda: started.process.poll() is None, job, timeout_s, begin, on_poll)
    finally:
        stop(started, on_kill)
    if link is not None:
        link.poll(read_all(started.stdout_path))
    return RunOutcome(
        exit_code=started.process.returncode,
        timed_out=timed_out,
        wall_s=time.monotonic() - begin,
        stdout_tail=read_tail(started.stdout_path),
        stderr_tail=read_tail(started.stderr_path),
        limit_hit=limit_hit,
    )


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
    """Run `command` to the end (`start` then `finish`); `pass_fds` stay open in it.

    Kills the process group (and calls `on_kill` for trees outside it) when
    the deadline passes or the output folder (or the shared Triton cache)
    grows past its limit, and in any case once the command has exited.
    """
    return finish(start(command, job, env, cwd, preexec, pass_fds), job, timeout_s, on_kill)


@dataclass
class SupervisedWorker:
    """A worker process started by `start`, cold (its job already written) or warm (waiting for
    the go file). The process and bwrap backends' `WarmWorker`; `run` serves a cold start too."""

    job: Job
    started: Started
    # Whether it was started with `--warm` (waits for the go file) rather than on a written job.
    warm: bool
    # Kills trees outside the process group (the sandbox uid's leftovers).
    on_kill: Callable[[], None] | None = None
    # Before the go file: hand the job's files, written after the start, to the sandbox uid.
    prepare: Callable[[], None] | None = None
    # Once it is gone: give back what the start took (the uid lease, pipes).
    release: Callable[[], None] | None = None
    # Why the sandbox failed before the worker started (None: it started), from its outcome.
    launch_failure: Callable[[RunOutcome], str | None] | None = None
    # Back to normal priority, for a worker started nicer (WarmStart.niceness).
    boost_priority: Callable[[], None] | None = None
    _released: bool = False

    def exited(self) -> bool:
        return self.started.process.poll() is not None

    def boost(self) -> None:
        if self.boost_priority is not None:
            self.boost_priority()

    def run(self, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        try:
            if self.warm:
                start_warm_job(self.job, self.prepare)
            outcome = finish(self.started, self.job, timeout_s, self.on_kill, link)
            failure = self.launch_failure(outcome) if self.launch_failure is not None else None
        finally:
            self._release()
        return replace(outcome, infra_failure=failure) if failure else outcome

    def discard(self) -> None:
        if self._released:
            return
        try:
            stop(self.started, self.on_kill)
        finally:
            self._release()

    def _release(self) -> None:
        if not self._released:
            self._released = True
            if self.release is not None:
                self.release()
