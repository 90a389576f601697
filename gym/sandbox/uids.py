"""Sandbox uids: one per concurrent grade, leased with a file lock, swept afterwards.

A grade's worker runs under a uid nothing else uses, so whatever is left of it
after the grade (a forked-off daemon, a process that escaped its group) can be
found by uid and killed.
"""

from __future__ import annotations

import fcntl
import glob
import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Uids are leased from [KGYM_SANDBOX_UID, KGYM_SANDBOX_UID + UID_COUNT).
DEFAULT_UID_BASE = 61000
UID_COUNT = 64


def uid_base() -> int:
    return int(os.environ.get("KGYM_SANDBOX_UID", str(DEFAULT_UID_BASE)))


def sandbox_uids() -> range:
    return range(uid_base(), uid_base() + UID_COUNT)


@contextmanager
def lease_uid(own_uid_unless_root: bool = False) -> Iterator[int]:
    """A sandbox uid no other grade on this machine is using, killed clean on release.

    With `own_uid_unless_root`, an ordinary user gets their own uid (they cannot
    switch to another one).
    """
    if own_uid_unless_root and os.geteuid() != 0:
        yield os.getuid()
        return
    folder = Path(tempfile.gettempdir()) / f"kgym-sandbox-uids-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    for uid in sandbox_uids():
        handle = open(folder / f"{uid}.lock", "w")  # held open for the lease
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        try:
            yield uid
        finally:
            kill_uid(uid)
            handle.close()
        return
    raise RuntimeError(f"all {UID_COUNT} sandbox uids from {uid_base()} are in use")


def processes_of(uid: int) -> list[int]:
    """Pids whose real uid is `uid`."""
    pids = []
    for status in glob.glob("/proc/[0-9]*/status"):
        try:
            with open(status) as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(status.split("/")[2]))
                        break
        except (OSError, ValueError):
            continue
    return pids


def kill_uid(uid: int) -> None:
    """SIGKILL every process of a leased sandbox uid (never the caller's own uid)."""
    if uid == os.getuid():
        return
    for _ in range(3):
        pids = processes_of(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
