"""Never two timed grades on one GPU at once.

A grade holds its GPU for all its jobs and baselines: a timing taken while
another grade's kernels run on the same GPU (or while this process's
device-wide sync waits on another thread's work) measures both. The lock is
per device index, shared by the threads of this process (a `threading.Lock`)
and by other gym processes on this host (an `flock` on a file in the system
temp folder). CPU grades take no lock: interpreted timings only check the
harness. Placing grades on different GPUs is the device pool's job; this is
the guarantee that holds whatever placed them.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import torch

from gym import settings
from gym.devices import nvidia
from gym.errors import SandboxUnavailable

_LOCKS: dict[int, threading.Lock] = {}
_GUARD = threading.Lock()


def lock_file(index: int) -> Path:
    """The host-wide lock file of this process's GPU `index` (KGYM_LOCK_DIR, default the temp folder),
    named after the GPU as the host names it (its entry in CUDA_VISIBLE_DEVICES: an index or a UUID),
    so two processes that number their GPUs differently still share one lock per physical GPU."""
    try:
        entry = nvidia.host_device_entry(index)
    except SandboxUnavailable:
        entry = str(index)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", entry)
    return (settings.lock_dir() or Path(tempfile.gettempdir())) / f"kgym-gpu-{name}.lock"


def device_index(device: torch.device) -> int:
    """The CUDA index `device` names (cuda means the current device, 0 unless set)."""
    if device.index is not None:
        return device.index
    return torch.cuda.current_device() if torch.cuda.is_available() else 0


@contextlib.contextmanager
def holding(device: torch.device) -> Iterator[None]:
    """Hold `device` for the block (a no-op on CPU)."""
    if device.type != "cuda":
        yield
        return
    index = device_index(device)
    with _GUARD:
        lock = _LOCKS.setdefault(index, threading.Lock())
    with lock:
        path = lock_file(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
