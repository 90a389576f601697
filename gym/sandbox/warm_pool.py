"""Warm, single-use sandboxed workers: started ahead of need, one job each.

A cold job pays for its worker's start (the sandbox, then importing torch and
Triton: most of a trivial grade). A pool keeps `size` workers per (sandbox,
device, GPU, limits) started ahead: each runs in its own sandbox on its own
empty job folder (its own uid, mounts and scratch, exactly as a cold one),
imports what every job needs, writes its ready file and waits. A grade's job
takes one, writes the job into that worker's folder, writes the go file, and
supervises it like a cold start; the worker runs that one job and exits
(nothing that ran submitted code is ever used again), and the pool starts a
replacement in the background.

A pooled worker is checked when it is taken: still running, its output folder
holding only its ready file, its input folder exactly as staged. One that
died, outlived its idle limit or fails a check is discarded, never used.
Workers that keep dying before they are ready stop the refill for a while
(`FAILURE_BACKOFF_S`); jobs then start cold, and a cold start reports why the
sandbox fails. Pools live until `shutdown_pools()` (registered at exit); a
bwrap worker dies with this process (`--die-with-parent`), a docker one is
removed by `shutdown_pools` or, after a crash, by the next docker pool.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from gym import settings
from gym.errors import SandboxUnavailable
from gym.log import get_logger
from gym.sandbox.base import Job, Limits, WarmWorker, get_sandbox, job_folder_parent
from gym.sandbox.environment import WarmStart
from gym.sandbox.staging import stage_worker
from gym.sandbox.supervise import pid_alive
from gym.worker.protocol import WARM_READY_FILE, WARM_READY_TEXT

logger = get_logger("sandbox")

# At most this many waiting workers per pool (each holds a few hundred MB once torch is imported):
# a 64-core CPU host grading 64 at once keeps 8 ready, not 64. KGYM_WARM_MAX overrides.
MAX_POOL_SIZE = 8
# A waiting worker exits on its own after this long without a job (the pool then starts another).
MAX_IDLE_S = 900.0
# A worker older than this is not handed out (it could reach MAX_IDLE_S during the job's setup).
MAX_HANDOUT_AGE_S = MAX_IDLE_S - 60.0
# How long a job waits for a worker that is still starting before it starts one cold.
READY_WAIT_S = 120.0
# Workers in a row that die before they are ready, and how long the pool then stops refilling.
FAILURES_BEFORE_BACKOFF = 3
FAILURE_BACKOFF_S = 60.0
# Workers start this much nicer (bwrap as root): a refill takes only CPU the running grades leave;
# a worker is raised to normal priority when a job takes it or waits for it.
REFILL_NICENESS = 19
# A pooled worker's folder is named WARM_PREFIX<pid of the trusted process>-<random>.
WARM_PREFIX = "kgym-warm-"
# How often the pool looks at its starting and waiting workers.
POLL_S = 0.05


@dataclass(frozen=True)
class PoolKey:
    """What a warm worker is bound to when it starts, so a job can only take a matching one."""

    # Sandbox backend name.
    sandbox: str
    # "cpu" or "cuda".
    device: str
    # The one GPU it may see (host index as the trusted process numbers it); None on CPU.
    gpu_index: int | None
    # Its resource limits (applied at its start).
    limits: Limits


@dataclass
class _Slot:
    root: Path
    worker: WarmWorker
    started_at: float
    # The input folder as staged: (relative path, size, mtime) of every entry.
    staged: list[tuple[str, int, int]]
    ready: bool = False


@dataclass
class PooledJob:
    """A warm worker handed to one job, with its job folder; use it once, then `close()`."""

    job: Job
    worker: WarmWorker
    root: Path
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        """Discard the worker if it never ran and remove its folder."""
        if not self._closed:
            self._closed = True
            self.worker.discard()
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PooledJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _snapshot(folder: Path) -> list[tuple[str, int, int]]:
    entries = []
    for root, folders, files in os.walk(folder):
        for name in sorted(folders + files):
            path = Path(root) / name
            info = path.lstat()
            entries.append((str(path.relative_to(folder)), info.st_size, info.st_mtime_ns))
    return sorted(entries)


class WarmPool:
    """`size` warm workers for one PoolKey, refilled by a background thread."""

    def __init__(self, key: PoolKey, size: int) -> None:
        self.key = key
        self.size = max(0, size)
        self.sandbox = get_sandbox(key.sandbox)
        # What happened to its workers: "started", "served", and "discarded: <why>".
        self.stats: Counter[str] = Counter()
        self._slots: list[_Slot] = []
        self._starting = 0
        self._failures = 0
        self._paused_until = 0.0
        self._closed = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._maintain, name=f"kgym-warm-{key.sandbox}-{key.device}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public

    def resize(self, size: int) -> None:
        with self._changed:
            self.size = max(self.size, size)
            self._changed.notify_all()

    def ready_workers(self) -> list[WarmWorker]:
        """The workers ready and waiting now, oldest first (the next `take` hands out the first)."""
        with self._changed:
            return [slot.worker for slot in self._slots if slot.ready]

    def ready_count(self) -> int:
        with self._changed:
            return sum(1 for slot in self._slots if slot.ready)

    def wait_ready(self, count: int | None = None, timeout_s: float = READY_WAIT_S) -> bool:
        """Block until `count` (default: size) workers are ready; False at the timeout."""
        wanted = self.size if count is None else count
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while sum(1 for slot in self._slots if slot.ready) < wanted:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return False
                self._changed.wait(min(left, 0.1))
            return True

    def take(self, wait_s: float = READY_WAIT_S) -> PooledJob | None:
        """A checked ready worker; waits up to `wait_s` for one that is starting; None when there is none."""
        deadline = time.monotonic() + wait_s
        with self._changed:
            while not self._closed:
                for slot in [slot for slot in self._slots if slot.ready]:
                    self._slots.remove(slot)
                    problem = self._problem(slot) or _boost(slot.worker)
                    if problem is not None:
                        self._discard(slot, problem)
                        continue
                    self.stats["served"] += 1
                    self._changed.notify_all()
                    job = slot.worker.job
                    return PooledJob(job=job, worker=slot.worker, root=slot.root)
                waiting_for = [slot for slot in self._slots if not slot.ready]
                for slot in waiting_for:
                    # A job waits for it: no longer a background refill.
                    _boost(slot.worker)
                starting = self._starting + len(waiting_for)
                left = deadline - time.monotonic()
                if not starting or left <= 0:
                    return None
                self._changed.wait(min(left, 0.05))
        return None

    def close(self) -> None:
        with self._changed:
            self._closed = True
            slots, self._slots = self._slots, []
            self._changed.notify_all()
        for slot in slots:
            self._discard(slot, "pool closed")
        self._thread.join(timeout=10)

    # ---------------------------------------------------------------- internal

    def _problem(self, slot: _Slot) -> str | None:
        """Why a ready worker must not be used (None: it may)."""
        if slot.worker.exited():
            return "exited while waiting"
        if time.monotonic() - slot.started_at > MAX_HANDOUT_AGE_S:
            return "too old"
        job = slot.worker.job
        try:
            outputs = sorted(os.listdir(job.out_dir))
            ready_text = (job.out_dir / WARM_READY_FILE).read_text()
        except OSError:
            return "its output folder cannot be read"
        if outputs != [WARM_READY_FILE] or ready_text != WARM_READY_TEXT:
            return f"its output folder holds {outputs[:5]}"
        if _snapshot(job.in_dir) != slot.staged:
            return "its input folder changed"
        # The job starts on an empty output folder, as a cold one does.
        (job.out_dir / WARM_READY_FILE).unlink()
        return None

    def _discard(self, slot: _Slot, why: str) -> None:
        self.stats[f"discarded: {why}"] += 1
        try:
            slot.worker.discard()
        finally:
            shutil.rmtree(slot.root, ignore_errors=True)

    def _start_one(self) -> _Slot:
        root = Path(tempfile.mkdtemp(prefix=f"{WARM_PREFIX}{os.getpid()}-", dir=job_folder_parent()))
        # Searchable (not readable) by the sandbox uid, which must reach the folders inside.
        root.chmod(0o711)
        try:
            cache = root / "triton-cache"
            job = Job.in_folder(root, self.key.device, self.key.limits, gpu_index=self.key.gpu_index, triton_cache=cache)
            stage_worker(job.lib_dir)
            worker = self.sandbox.start_warm(job, WarmStart(device=self.key.device, max_idle_s=MAX_IDLE_S, niceness=REFILL_NICENESS))
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return _Slot(root=root, worker=worker, started_at=time.monotonic(), staged=_snapshot(job.in_dir))

    def _maintain(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
                self._check_starting()
                wanted = self.size - len(self._slots) - self._starting
                start_now = wanted > 0 and time.monotonic() >= self._paused_until
                if start_now:
                    self._starting += 1
                else:
                    self._changed.wait(POLL_S)
                    continue
            slot: _Slot | None = None
            try:
                slot = self._start_one()
            except Exception as error:  # noqa: BLE001 - a pool that cannot start workers leaves jobs cold
                self._failed(f"could not start: {type(error).__name__}: {error}")
            with self._changed:
                self._starting -= 1
                if slot is not None:
                    self.stats["started"] += 1
                    if self._closed:
                        self._discard(slot, "pool closed")
                    else:
                        self._slots.append(slot)
                self._changed.notify_all()

    def _check_starting(self) -> None:
        """Mark workers that wrote their ready file; discard those that died (lock held)."""
        for slot in list(self._slots):
            if slot.ready:
                if slot.worker.exited():
                    self._slots.remove(slot)
                    self._discard(slot, "exited while waiting")
                continue
            if (slot.worker.job.out_dir / WARM_READY_FILE).is_file():
                slot.ready = True
                self._failures = 0
                self._changed.notify_all()
            elif slot.worker.exited():
                self._slots.remove(slot)
                self._discard(slot, "exited before it was ready")
                self._failed(_stderr_tail(slot.worker.job))

    def _failed(self, why: str) -> None:
        self._failures += 1
        if self._failures >= FAILURES_BEFORE_BACKOFF:
            self._failures = 0
            self._paused_until = time.monotonic() + FAILURE_BACKOFF_S
            logger.warning(
                "warm %s workers keep failing to start (%s); jobs start cold for the next %.0f s", self.key.sandbox, why.strip()[-300:], FAILURE_BACKOFF_S
            )


def _boost(worker: WarmWorker) -> str | None:
    """Raise `worker` to normal priority; why not, when it cannot be (it is then not used)."""
    try:
        worker.boost()
    except OSError as error:
        return f"its priority could not be raised ({error})"
    return None


def _stderr_tail(job: Job) -> str:
    try:
        return (job.scratch_dir / "worker.stderr").read_text(errors="replace")[-300:]
    except OSError:
        return ""


# ------------------------------------------------------------------ registry

_POOLS: dict[PoolKey, WarmPool] = {}
# Who asked for each pool (ids of owners; None: someone without one, kept until shutdown_pools).
_OWNERS: dict[PoolKey, set[int | None]] = {}
_REGISTRY_LOCK = threading.Lock()


def pool_key(sandbox: str, device: torch.device, limits: Limits | None = None) -> PoolKey:
    from gym.devices.lock import device_index

    return PoolKey(sandbox=sandbox, device=device.type, gpu_index=device_index(device) if device.type == "cuda" else None, limits=limits or Limits())


def ensure_pool(sandbox: str, device: torch.device, size: int, limits: Limits | None = None, owner: object | None = None) -> WarmPool | None:
    """The pool for (sandbox, device, limits), started or grown to `size` (at most MAX_POOL_SIZE); None when the sandbox is unusable
    here (its grades then report why) or `size` is 0. With an `owner` (an executor), `release_pools(owner)`
    stops the pools only it still uses; without one, the pool lives until `shutdown_pools()`."""
    size = min(size, settings.warm_max() or MAX_POOL_SIZE)
    if size <= 0:
        return None
    key = pool_key(sandbox, device, limits)
    with _REGISTRY_LOCK:
        _OWNERS.setdefault(key, set()).add(id(owner) if owner is not None else None)
        pool = _POOLS.get(key)
        if pool is None:
            try:
                pool = _POOLS[key] = WarmPool(key, size)
            except SandboxUnavailable:
                return None
            remove_orphan_folders()
            if sandbox == "docker":
                from gym.sandbox.docker_backend import remove_orphans

                remove_orphans()
        else:
            pool.resize(size)
        return pool


def remove_orphan_folders() -> int:
    """Remove pooled workers' folders whose trusted process is gone (killed before it could); returns how many."""
    parent = Path(job_folder_parent() or tempfile.gettempdir())
    removed = 0
    for folder in parent.glob(f"{WARM_PREFIX}*-*"):
        owner = folder.name.removeprefix(WARM_PREFIX).split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not pid_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def take_warm(sandbox: str, device: torch.device, limits: Limits | None = None) -> PooledJob | None:
    """A warm worker for a job on (sandbox, device, limits), or None when no pool serves that (start cold)."""
    with _REGISTRY_LOCK:
        pool = _POOLS.get(pool_key(sandbox, device, limits))
    return pool.take() if pool is not None else None


def release_pools(owner: object) -> None:
    """`owner` no longer needs its pools: stop those nobody else asked for."""
    stopped = []
    with _REGISTRY_LOCK:
        for key, owners in list(_OWNERS.items()):
            owners.discard(id(owner))
            if not owners:
                del _OWNERS[key]
                if key in _POOLS:
                    stopped.append(_POOLS.pop(key))
    for pool in stopped:
        pool.close()


def shutdown_pools() -> None:
    """Stop every pool and its waiting workers."""
    with _REGISTRY_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
        _OWNERS.clear()
    for pool in pools:
        pool.close()


atexit.register(shutdown_pools)


def copy_cache(source: Path, target: Path, limit_bytes: int) -> None:
    """Replace `target`'s contents with `source`'s folders and plain files (links and anything else
    left out, nothing followed), up to `limit_bytes`: a grade's Triton cache moved between its jobs."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    total = 0
    pending = [(source, target)]
    while pending:
        here, there = pending.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            destination = there / entry.name
            if stat.S_ISDIR(info.st_mode):
                destination.mkdir(exist_ok=True)
                pending.append((Path(entry.path), destination))
            elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                total += info.st_size
                if total > limit_bytes:
                    return
                shutil.copyfile(entry.path, destination, follow_symlinks=False)
