"""Sandbox uids: one per concurrent grade, leased with a file lock, swept clean before and after.

A grade's worker runs under a uid nothing else uses, so whatever is left of it
after the grade (a forked-off daemon, a process that escaped its group, a fork
bomb) can be found by uid and killed. RLIMIT_NPROC counts every process of a
uid, so a uid is handed to the next grade only once a full /proc scan finds
none of its processes alive (and at most ZOMBIE_ALLOWANCE zombies waiting for
their parent, init, to reap them: each still counts until it is). A uid
that cannot be swept clean within CLEAN_DEADLINE_S is quarantined: this
process never leases it again, and keeps its lock (so no other grader on the
machine leases it either) while it retries the sweep at every later lease; once
a retry finds it clean the lock is let go.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gym import settings
from gym.log import get_logger

logger = get_logger("sandbox")

# Uids are leased from [KGYM_SANDBOX_UID, KGYM_SANDBOX_UID + UID_COUNT).
DEFAULT_UID_BASE = 61000
UID_COUNT = 64
# How long a sweep may take before its uid is quarantined (a fork bomb's few hundred processes go in milliseconds).
CLEAN_DEADLINE_S = 10.0
# How long a later lease spends on each quarantined uid that is still dirty.
RETRY_DEADLINE_S = 0.05
# Longest pause between two rounds of a sweep.
MAX_PAUSE_S = 0.02
# Zombies of a swept uid left to a parent outside it (init), at most: each holds one RLIMIT_NPROC slot until reaped.
ZOMBIE_ALLOWANCE = 8

# Quarantined uid -> its lock file, held open while the uid is still dirty (None once it is clean).
_QUARANTINE: dict[int, IO[str] | None] = {}
_QUARANTINE_LOCK = threading.Lock()


def uid_base() -> int:
    chosen = settings.sandbox_uid_base()
    return DEFAULT_UID_BASE if chosen is None else chosen


def sandbox_uids() -> range:
    return range(uid_base(), uid_base() + UID_COUNT)


def quarantined() -> set[int]:
    """The uids this process will not lease again."""
    with _QUARANTINE_LOCK:
        return set(_QUARANTINE)


def _lock_folder() -> Path:
    folder = Path(tempfile.gettempdir()) / f"kgym-sandbox-uids-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


@contextmanager
def lease_uid(own_uid_unless_root: bool = False) -> Iterator[int]:
    """A sandbox uid no other grade on this machine is using, with no process left, swept clean on release.

    With `own_uid_unless_root`, an ordinary user gets their own uid (they cannot
    switch to another one, nor sweep it: their own processes live there).
    """
    if own_uid_unless_root and os.geteuid() != 0:
        yield os.getuid()
        return
    retry_quarantined()
    folder = _lock_folder()
    for uid in sandbox_uids():
        if uid in quarantined():
            continue
        handle = open(folder / f"{uid}.lock", "w")  # held open for the lease
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        # Free does not mean clean: a grader that died mid-grade leaves its processes behind.
        if not kill_uid(uid):
            _quarantine(uid, handle)
            continue
        try:
            yield uid
        finally:
            if kill_uid(uid):
                handle.close()
            else:
                _quarantine(uid, handle)
        return
    raise RuntimeError(
        f"all {UID_COUNT} sandbox uids from {uid_base()} are in use"
        + (f" or quarantined ({len(quarantined())} could not be swept clean of their processes)" if quarantined() else "")
    )


def _quarantine(uid: int, handle: IO[str]) -> None:
    with _QUARANTINE_LOCK:
        _QUARANTINE[uid] = handle
    left = scan(uid)
    logger.warning(
        "sandbox uid %d quarantined: %d of its processes (%d zombies) were still there after %g s of SIGKILL; it is not leased again by this process",
        uid,
        len(left),
        sum(p.zombie for p in left),
        CLEAN_DEADLINE_S,
    )


def retry_quarantined(deadline_s: float | None = None) -> None:
    """Sweep each quarantined uid that is still dirty once more; release the lock of those now clean."""
    with _QUARANTINE_LOCK:
        dirty = [uid for uid, handle in _QUARANTINE.items() if handle is not None]
    for uid in dirty:
        if kill_uid(uid, RETRY_DEADLINE_S if deadline_s is None else deadline_s):
            with _QUARANTINE_LOCK:
                handle = _QUARANTINE.get(uid)
                if handle is not None:
                    handle.close()
                    _QUARANTINE[uid] = None


@dataclass(frozen=True)
class Process:
    pid: int
    # Dead, waiting for its parent to collect it (it cannot run or fork, but counts in RLIMIT_NPROC).
    zombie: bool
    ppid: int


def scan(uid: int) -> list[Process]:
    """Every process whose real uid is `uid`, from one pass over /proc."""
    found = []
    for status in glob.glob("/proc/[0-9]*/status"):
        try:
            with open(status) as handle:
                state, ppid = "", 0
                for line in handle:
                    if line.startswith("State:"):
                        state = line.split()[1]
                    elif line.startswith("PPid:"):
                        ppid = int(line.split()[1])
                    elif line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(Process(int(status.split("/")[2]), state in ("Z", "X"), ppid))
                        break
        except (OSError, ValueError, IndexError):
            continue
    return found


def processes_of(uid: int) -> list[int]:
    """Pids whose real uid is `uid` (zombies included)."""
    return [process.pid for process in scan(uid)]


def _sweepable(uid: int) -> bool:
    """Never the caller's own uid (it would kill the caller's siblings) nor root's."""
    return uid not in (0, os.getuid())


def signal_uid(uid: int, pids: list[int] | None = None) -> None:
    """One round of SIGKILL for every process of `uid`, without waiting for them to go.

    As root this is first kill(-1, SIGKILL) sent *as* `uid` (a short-lived shell's
    `kill -9 -1` run under it; -1 is every process the sender may signal): the kernel
    delivers it to all of the uid's processes in one pass under the task-list lock,
    so a fork bomb cannot fork faster than it is killed. Then, and otherwise, each of
    `pids` (default: a /proc scan) gets its own SIGKILL.
    """
    if not _sweepable(uid):
        return
    if os.geteuid() == 0 and (shell := _shell()) is not None:
        try:
            subprocess.run(
                [shell, "-c", "kill -9 -1"],
                user=uid,
                group=uid,
                extra_groups=[],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            pass  # the per-pid round below still runs
    for pid in processes_of(uid) if pids is None else pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


_SHELL: list[str | None] = []


def _shell() -> str | None:
    """A POSIX shell every uid may run (found once)."""
    if not _SHELL:
        _SHELL.append(shutil.which("sh", path="/bin:/usr/bin"))
    return _SHELL[0]


def kill_uid(uid: int, deadline_s: float | None = None) -> bool:
    """SIGKILL every process of a leased sandbox uid until a full /proc scan finds none alive.

    Zombies are dead already; those this process is the parent of (it is when it
    runs as pid 1 or a subreaper) are reaped here, the others are left to their
    parent, up to ZOMBIE_ALLOWANCE of them (bwrap's pid-1 leaves one per grade,
    reaped by init). Returns True when clean (always for the caller's own uid
    and root, which are never swept), False when it still was not after
    `deadline_s` (default CLEAN_DEADLINE_S): an unkillable process, or zombies
    their parents do not reap.
    """
    if not _sweepable(uid):
        return True
    end = time.monotonic() + (CLEAN_DEADLINE_S if deadline_s is None else deadline_s)
    pause = 0.001
    while True:
        processes = scan(uid)
        live = [process.pid for process in processes if not process.zombie]
        zombies = [process for process in processes if process.zombie and not _reaped(process)]
        if not live and len(zombies) <= ZOMBIE_ALLOWANCE:
            return True
        if time.monotonic() >= end:
            return False
        if live:
            signal_uid(uid, live)
        time.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE_S)


def _reaped(process: Process) -> bool:
    """Collect a zombie of the sandbox uid whose parent is this process; True once it is gone."""
    if process.ppid != os.getpid():
        return False
    try:
        return os.waitpid(process.pid, os.WNOHANG)[0] == process.pid
    except ChildProcessError:
        return True
