"""The sandbox interface and its registry.

A sandbox runs the worker for one job: `python -P -m gym.worker IN OUT` with
the worker's code staged in `IN/lib`. `IN` (request, submission, input
tensors, worker code) is read-only for the worker, `OUT` is the only writable
place the grader reads back, scratch is private, and everything the worker
started is killed at the deadline or when a limit is hit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gym import registry, settings
from gym.errors import SandboxUnavailable, UnknownPlugin
from gym.log import get_logger
from gym.sandbox.environment import WarmStart

logger = get_logger("sandbox")

TAIL = 4000


@dataclass(frozen=True)
class Limits:
    """Resource limits for one grade's worker (every backend enforces these)."""

    # Writable data (heap, anonymous mappings) of the worker, bytes.
    memory_bytes: int = 8 << 30
    # CPU seconds of the worker process.
    cpu_seconds: int = 600
    # Processes and threads of the sandbox user.
    processes: int = 512
    # Largest file the worker may write, bytes (outputs, stdout, stderr).
    file_size_bytes: int = 1 << 30
    # Open file descriptors.
    open_files: int = 1024
    # Size of the private tmpfs (HOME, /tmp, Triton cache), bytes.
    scratch_bytes: int = 512 << 20
    # Everything the worker may leave in OUT together, bytes (checked while it runs).
    output_bytes: int = 2 << 30


# Job folders go to this memory file system when it has room (`job_folder_parent`): a job
# writes and reads back hundreds of small files, several times cheaper there than on a disk.
MEMORY_JOB_PARENT = Path("/dev/shm")
# Free space it must have: a few jobs' worth of outputs (Limits.output_bytes each) at once.
MEMORY_JOB_MIN_FREE_BYTES = 16 << 30


def job_folder_parent() -> str | None:
    """Where job folders are made: `KGYM_JOB_DIR` when set; else MEMORY_JOB_PARENT when it is a
    writable folder with MEMORY_JOB_MIN_FREE_BYTES free; else None (the system temp folder)."""
    chosen = settings.job_dir()
    if chosen:
        return chosen
    try:
        stats = os.statvfs(MEMORY_JOB_PARENT)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize >= MEMORY_JOB_MIN_FREE_BYTES and os.access(MEMORY_JOB_PARENT, os.W_OK | os.X_OK):
        return str(MEMORY_JOB_PARENT)
    return None


@dataclass(frozen=True)
class Job:
    # Request, submission, input tensors and the worker's code in lib/ (read-only for the worker).
    in_dir: Path
    # Where the worker writes its records and output tensors.
    out_dir: Path
    # Trusted-side scratch: the worker's stdout/stderr logs (process backend: also its HOME).
    scratch_dir: Path
    # "cpu" or "cuda": decides the interpreter and the device nodes.
    device: str
    limits: Limits = field(default_factory=Limits)
    # The one GPU a cuda job may use, as the trusted process numbers it (its cuda:N, i.e. an
    # index into the host's CUDA_VISIBLE_DEVICES when that is set); None means 0. Inside the
    # sandbox that GPU is always cuda:0. Ignored for cpu jobs.
    gpu_index: int | None = None
    # A trusted-side folder reused across one grade's jobs as the worker's Triton cache
    # (read-write for the worker, capped at `limits.scratch_bytes`); None: private scratch.
    triton_cache: Path | None = None

    @property
    def lib_dir(self) -> Path:
        return self.in_dir / "lib"

    @property
    def host_gpu(self) -> int:
        """The job's GPU index on the trusted side (0 when none was given)."""
        return self.gpu_index or 0

    @classmethod
    def in_folder(
        cls,
        root: Path,
        device: str,
        limits: Limits | None = None,
        *,
        gpu_index: int | None = None,
        triton_cache: Path | None = None,
    ) -> Job:
        """A job whose in/, out/ and scratch/ folders are created under `root`."""
        job = cls(
            in_dir=root / "in",
            out_dir=root / "out",
            scratch_dir=root / "scratch",
            device=device,
            limits=limits or Limits(),
            gpu_index=gpu_index,
            triton_cache=triton_cache,
        )
        for folder in (job.in_dir, job.out_dir, job.scratch_dir):
            folder.mkdir()
        if triton_cache is not None:
            triton_cache.mkdir(parents=True, exist_ok=True)
        return job


@dataclass(frozen=True)
class RunOutcome:
    # Exit status of the worker (negative: killed by that signal); None when it never started.
    exit_code: int | None
    # True when the wall-clock deadline killed it.
    timed_out: bool
    # Wall-clock seconds from start to exit.
    wall_s: float
    # Last characters of its stdout/stderr, for diagnostics only (never for a verdict).
    stdout_tail: str
    stderr_tail: str
    # Set when the supervisor killed the worker for a limit other than time: "output" (OUT
    # outgrew output_bytes), "triton_cache" (the shared Triton cache outgrew scratch_bytes), "memory".
    limit_hit: str | None = None
    # Set when the sandbox itself failed before the worker started (bwrap, setpriv or prlimit
    # could not build the jail or fork, docker could not create or start the container): why,
    # in the launcher's own words. The submission never ran, so the failure is the gym's
    # (`infra_error`), never the submission's. Decided only by what happened before any
    # submitted code could run, so a submission can neither cause it nor hide it.
    infra_failure: str | None = None


class WitnessLink(Protocol):
    """The trusted side of the witness's private channel (gym.worker.witness): handed the worker's
    standard output so far, on every poll while the worker runs and once more after it exited.
    Only the witness writes there (the submission's process has its output sent to standard
    error), so what it says, and when, is the witness's word."""

    def poll(self, stdout: bytes) -> None: ...


class WarmWorker(Protocol):
    """A worker started ahead of its job on an empty job folder (`Sandbox.start_warm`).

    It has imported torch and Triton and waits; nothing submitted has run in it.
    It serves exactly one job: `run` once, or `discard`.
    """

    # The job folder it was started on: the job is written into it before `run`.
    job: Job

    def exited(self) -> bool:
        """Whether it has already exited (it can no longer take a job)."""
        ...

    def boost(self) -> None:
        """Run at normal priority from now on (a no-op for one started at normal); raises OSError when it cannot."""
        ...

    def run(self, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        """Start the job written into `job.in_dir` (the go file), supervise it to the end like
        `Sandbox.run`, the deadline counted from now, and release everything it held."""
        ...

    def discard(self) -> None:
        """Kill it and release everything it held, without running a job; idempotent."""
        ...


class Sandbox(Protocol):
    # Registry name, e.g. "bwrap".
    name: str
    # Whether the backend isolates the submission (False only for "process").
    isolated: bool

    def check(self) -> str | None:
        """None when usable here, else why not and how to fix it."""
        ...

    def run(self, job: Job, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        """Run the worker for `job`; kill everything it started after `timeout_s`. `link` sees the
        worker's standard output while it runs (the witness's channel)."""
        ...

    def start_warm(self, job: Job, warm: WarmStart) -> WarmWorker:
        """Start a worker on the empty job folder `job` (its lib/ staged) that imports what every job
        needs and waits for its job (see WarmWorker); raises when it cannot even be started."""
        ...


# The sandbox table of gym.registry (the same dict): the backends register themselves on import.
_REGISTRY: dict[str, Sandbox] = registry.entries("sandbox", scan=False)
_WARNED: set[str] = set()


def register(sandbox: Sandbox) -> Sandbox:
    """Register a backend under its `name` (gym.registry's "sandbox" kind)."""
    return registry.register("sandbox", sandbox.name, sandbox)


def available_sandboxes() -> dict[str, Sandbox]:
    """Every registered backend, the installed plugins' too (one that fails to load is left out, with a warning)."""
    found: dict[str, Sandbox] = {}
    for name in registry.names("sandbox"):
        try:
            found[name] = registry.lookup("sandbox", name)
        except Exception as error:  # noqa: BLE001 - a broken plugin must not hide the working backends
            logger.warning("sandbox plugin %r cannot be loaded: %s: %s", name, type(error).__name__, error)
    return found


def get_sandbox(name: str) -> Sandbox:
    """The usable backend called `name`; SandboxUnavailable (with how to fix it) otherwise.

    Never falls back to another backend.
    """
    try:
        sandbox: Sandbox = registry.lookup("sandbox", name)
    except UnknownPlugin as error:
        raise SandboxUnavailable(str(error), sandbox=name) from None
    problem = sandbox.check()
    if problem:
        raise SandboxUnavailable(f"sandbox {name!r} is unavailable: {problem}", sandbox=name)
    if not sandbox.isolated and name not in _WARNED:
        _WARNED.add(name)
        logger.warning("sandbox %r does not isolate the submission; use it only to debug trusted code", name)
    return sandbox
