"""`ray`: every grade is one Ray task, run by the same trusted grader and sandbox on whichever node Ray picks.

Install it with `pip install 'kernel-gym[ray]'`. The driver (the process that
builds the executor: `kgym run`, `kgym serve`, `grade_many`) sends each grade
as a `GradeRequest`: a bundle of the task's files (the task folder and the
reference modules its spec names, as bytes by relative path, sizes bounded),
the spec itself (it may carry a contract preset applied in memory), the
submission's bytes and the `GradeOptions`. The Ray worker writes the bundle
into a content-addressed folder under its node's temp folder, private to its
user (reused by later grades of the same task while its bytes still match),
loads the task from there (same id, same version),
grades on `cuda:0` (Ray sets CUDA_VISIBLE_DEVICES to the GPU it granted) or
`cpu`, and returns the GradeResult as JSON. Worker nodes need only the
installed package and a sandbox runtime, never a checkout. Only the driver
writes run folders: a grade's result comes back once, through `grade()`.

Resources: on a cluster with GPUs each grade asks for `num_gpus=1` (and Ray's
one CPU), else `num_cpus=1`; both are configurable, and `concurrency`
defaults to how many such grades the cluster holds at once. GPU grades run in
a worker process of their own (Ray's `max_calls=1` for GPU functions): the
trusted grader initialises CUDA, and a reused worker would keep the GPU of
its first task whatever Ray granted next.

Retries: a grade whose Ray worker or node dies, or whose result is lost, is
submitted again by the driver, at most `max_retries` times (Ray's own retries
are off, so the driver counts every attempt and its reason). When they run
out, or on a failure a retry cannot mend (an unschedulable task, a runtime
environment that cannot be built, the grade raising on the worker), `grade()`
returns an `infra_error` GradeResult whose error names what Ray lost and the
attempts spent; it never raises, and it returns exactly one result per call.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gym import settings
from gym.errors import ExecutorError, TaskBundleError
from gym.grading.grader import grade
from gym.grading.infra_result import infra_result
from gym.grading.options import GradeOptions
from gym.log import get_logger
from gym.schema.result import GradeResult
from gym.tasks.loader import load_task
from gym.tasks.model import Task, TaskSpec

log = get_logger("execution")

# What one task's bundle may hold: a task folder is a toml, a solution and a few references; a
# KernelBench one adds its problem file. Anything near these limits is a folder holding data.
MAX_BUNDLE_BYTES = 16 * 1024 * 1024
MAX_BUNDLE_FILES = 512
# Never carried: byte-code caches and editor or VCS droppings.
_SKIPPED_PARTS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
# Tests set this (through the cluster's runtime environment) to a folder where every grade attempt
# records the pid of the Ray worker running it, one file per attempt, so a test can kill it.
PID_DIR_ENV = "KGYM_RAY_PID_DIR"


@dataclass(frozen=True)
class TaskBundle:
    """A task's files as bytes, by path relative to the bundle's root: `tasks/<task id>/...` and
    `references/<module>.py`; `digest` names the content (the worker's folder for it)."""

    task_id: str
    version: int
    files: dict[str, bytes]
    digest: str


@dataclass(frozen=True)
class GradeRequest:
    """Everything a Ray worker needs for one grade (pickled into the task's arguments)."""

    bundle: TaskBundle
    # The task's spec as the driver holds it (a contract preset may have replaced its contract).
    spec_json: str
    submission_name: str
    submission: bytes
    options_json: str
    gpu: bool
    # Whether the worker may warm a sandbox pool (only where worker processes are reused: CPU grades).
    warm_pool: bool


def _files_under(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file() and not _SKIPPED_PARTS & set(path.relative_to(folder).parts))


def _reference_modules(task: Task) -> list[str]:
    """The references/ modules the spec names ("module:function"); an imported KernelBench task names none."""
    if task.spec.kernelbench is not None:
        return []
    targets = (task.spec.reference, task.spec.inputs, task.spec.oracle)
    return sorted({target.split(":", 1)[0] for target in targets if target is not None})


def task_bundle(task: Task) -> TaskBundle:
    """`task`'s folder and the reference modules it names, as a bundle; TaskBundleError past the limits."""
    sources: list[tuple[str, Path]] = [(f"tasks/{task.id}/{path.relative_to(task.folder).as_posix()}", path) for path in _files_under(task.folder)]
    sources += [(f"references/{module}.py", task.references_dir / f"{module}.py") for module in _reference_modules(task)]
    if len(sources) > MAX_BUNDLE_FILES:
        raise TaskBundleError(f"{task.folder}: {len(sources)} files is more than a Ray grade carries ({MAX_BUNDLE_FILES}); keep data out of the task folder")
    files: dict[str, bytes] = {}
    total = 0
    digest = hashlib.sha256()
    for relative, path in sources:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise TaskBundleError(f"{path}: cannot be read for a Ray grade: {error.strerror or error}") from None
        total += len(data)
        if total > MAX_BUNDLE_BYTES:
            raise TaskBundleError(
                f"{task.folder}: its files pass {MAX_BUNDLE_BYTES // (1024 * 1024)} MiB, more than a Ray grade carries; keep data out of the task folder"
            )
        files[relative] = data
        digest.update(relative.encode() + b"\0" + hashlib.sha256(data).digest())
    return TaskBundle(task_id=task.id, version=task.spec.version, files=files, digest=digest.hexdigest())


# ---------------------------------------------------------------- the worker's side


def _safe_relative(relative: str) -> PurePosixPath:
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise TaskBundleError(f"bundle path {relative!r} leaves the bundle")
    return path


def _private_folder(path: Path) -> Path:
    """`path`, created 0700 when missing; TaskBundleError when another user owns it or others may write in it
    (the trusted grader imports reference modules from below it)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise TaskBundleError(f"{path}: not a private folder of this user; task files are not written or loaded there")
    return path


def _holds(folder: Path, bundle: TaskBundle) -> bool:
    """Whether `folder` holds the bundle's files byte for byte (a temp cleaner may have removed some)."""
    try:
        return (folder / ".complete").is_file() and all(
            folder.joinpath(*_safe_relative(relative).parts).read_bytes() == data for relative, data in bundle.files.items()
        )
    except OSError:
        return False


def materialize(bundle: TaskBundle, root: Path | None = None) -> Path:
    """Write `bundle` into `<root>/kgym-ray-tasks-<uid>/<digest>/` (root: this node's temp folder, the parent
    private to this user) and return that folder. One already there is reused when it holds exactly the
    bundle's bytes; a new one is written aside and renamed into place, so no grade sees a half-written one."""
    base = _private_folder((root or Path(tempfile.gettempdir())) / f"kgym-ray-tasks-{os.getuid()}")
    final = base / bundle.digest
    if _holds(final, bundle):
        return final
    staging = Path(tempfile.mkdtemp(prefix=f".{bundle.digest[:12]}-", dir=base))
    try:
        for relative, data in bundle.files.items():
            target = staging.joinpath(*_safe_relative(relative).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (staging / ".complete").write_text(bundle.task_id + "\n")
        try:
            staging.rename(final)
        except OSError:  # there already: another grade's copy (use it) or a damaged one (replace it)
            if not _holds(final, bundle):
                shutil.rmtree(final, ignore_errors=True)
                staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def _load_bundled_task(request: GradeRequest) -> Task:
    bundle = request.bundle
    root = materialize(bundle)
    loaded = load_task(root.joinpath("tasks", *PurePosixPath(bundle.task_id).parts), root / "references", root / "tasks")
    if (loaded.id, loaded.spec.version) != (bundle.task_id, bundle.version):
        raise TaskBundleError(f"the bundle loads {loaded.id} v{loaded.spec.version}, not {bundle.task_id} v{bundle.version}")
    spec = TaskSpec.model_validate_json(request.spec_json)
    return loaded if spec == loaded.spec else loaded.model_copy(update={"spec": spec})


def pid_file_prefix(task_id: str) -> str:
    """How the pid files of `task_id`'s attempts are named in PID_DIR_ENV's folder: `<prefix><pid>.<random>`."""
    return task_id.replace("/", "_") + "."


def _record_pid(task_id: str) -> None:
    folder = settings.ray_pid_dir()
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        name = f"{pid_file_prefix(task_id)}{os.getpid()}.{uuid.uuid4().hex[:8]}"
        # Written under a hidden name and renamed, so a watcher never reads a half-written file.
        staging = Path(folder) / f".{name}.tmp"
        staging.write_text(str(os.getpid()))
        staging.rename(Path(folder) / name)


def _warm(sandbox: str, device: str) -> None:
    """Keep one warm sandboxed worker in this (reused) Ray worker process; its bwrap workers die with it."""
    try:
        from gym.sandbox.warm_pool import ensure_pool
    except ImportError:  # a gym without warm pools: every job starts cold
        return
    import torch

    ensure_pool(sandbox, torch.device(device), size=1)


def run_request(request: GradeRequest) -> tuple[str, str]:
    """On the Ray worker: grade `request`; ("result", GradeResult JSON), or ("error", why) for the gym's own
    failure before a result existed (the driver turns it into an infra_error). Never raises."""
    try:
        _record_pid(request.bundle.task_id)
        task = _load_bundled_task(request)
        options = GradeOptions.model_validate_json(request.options_json)
        # With num_gpus, Ray's CUDA_VISIBLE_DEVICES shows only the granted GPU: it is cuda:0 here, and the
        # device lock and the sandbox name it as the node does (gym.devices.lock, gym.devices.nvidia).
        device = "cuda:0" if request.gpu else "cpu"
        if options.warm and not request.warm_pool:
            options = options.model_copy(update={"warm": False})
        if options.warm:
            _warm(options.sandbox, device)
        with tempfile.TemporaryDirectory(prefix="kgym-ray-grade-") as folder:
            path = Path(folder) / request.submission_name
            path.write_bytes(request.submission)
            result = grade(task, path, options, device=device)
        return "result", result.model_dump_json()
    except Exception as error:  # noqa: BLE001 - reported to the driver, which records an infra_error
        return "error", f"{type(error).__name__}: {error}"


# ---------------------------------------------------------------- the driver's side


def _first_line(error: BaseException, limit: int = 300) -> str:
    text = str(error).strip().splitlines()
    line = text[0].strip() if text else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _describe(error: BaseException) -> tuple[str, bool]:
    """What Ray lost, in words, and whether another attempt can mend it."""
    import ray.exceptions as rex

    retryable: list[tuple[type[BaseException], str]] = [
        (rex.WorkerCrashedError, "the Ray worker running the grade died"),
        (rex.OutOfMemoryError, "Ray killed the grade's worker for memory"),
        (rex.NodeDiedError, "the Ray node running the grade died"),
        (rex.LocalRayletDiedError, "the Ray node running the grade died"),
        (rex.ObjectLostError, "the grade's result was lost"),
        (rex.RaySystemError, "Ray failed"),
    ]
    final: list[tuple[type[BaseException], str]] = [
        (rex.TaskUnschedulableError, "Ray cannot schedule the grade"),
        (rex.RuntimeEnvSetupError, "Ray could not set up the grade's runtime environment"),
        (rex.TaskCancelledError, "the grade was cancelled"),
        (rex.RayTaskError, "the grade raised on the Ray worker (is kernel-gym installed there?)"),
    ]
    for kind, words in retryable:
        if isinstance(error, kind):
            return f"{words} ({type(error).__name__}: {_first_line(error)})", True
    for kind, words in final:
        if isinstance(error, kind):
            return f"{words} ({type(error).__name__}: {_first_line(error)})", False
    return f"submitting the grade to Ray failed ({type(error).__name__}: {_first_line(error)})", False


def _cluster_count(resources: dict[str, float], key: str) -> float:
    return float(resources.get(key, 0.0))


class RayExecutor:
    """Grades as Ray tasks; see the module's docstring. Thread-safe: `concurrency` threads may call `grade`."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        concurrency: int | None = None,
        num_gpus: float | None = None,
        num_cpus: float | None = None,
        max_retries: int = 2,
        options: GradeOptions | None = None,
        warm: bool = True,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        """`address`: None starts a local Ray (or joins RAY_ADDRESS), "auto" joins the cluster `ray start`
        runs here, "HOST:PORT" or "ray://HOST:10001" another; a Ray this process already initialised is
        used as it is (and left running by `close()`). `num_gpus`/`num_cpus`: what each grade asks for
        (default: one GPU on a cluster with GPUs, else one CPU). `concurrency`: grades at once (default:
        how many such grades the cluster holds). `max_retries`: further attempts of a grade whose worker
        or node died. `warm`: let CPU workers keep a warm sandbox. `init_options`: more `ray.init` keywords."""
        from gym.extras import require

        require("ray", "the ray executor")
        import ray

        if max_retries < 0:
            raise ExecutorError(f"max_retries must be 0 or more, not {max_retries}")
        self.address = address
        self.max_retries = max_retries
        self.options = options or GradeOptions()
        self.warm = warm
        self._closed = threading.Event()
        self._owns_ray = False
        # Ray tasks of grades in flight, cancelled by close().
        self._in_flight: set[Any] = set()
        self._lock = threading.Lock()
        if not ray.is_initialized():
            settings: dict[str, Any] = {"address": address, "logging_level": logging.WARNING, "log_to_driver": False}
            if address is None:
                settings["include_dashboard"] = False
            settings.update(init_options or {})
            try:
                ray.init(**settings)
            except Exception as error:  # a cluster that cannot be reached is the caller's ExecutorError
                raise ExecutorError(f"cannot start or join Ray at {address or 'a new local instance'}: {type(error).__name__}: {error}") from error
            self._owns_ray = True
        try:
            self._place(ray.cluster_resources(), num_gpus, num_cpus, concurrency)
        except ExecutorError:
            self.close()
            raise
        # GPU grades: a fresh worker process each (max_calls=1, see the module's docstring).
        # Ray's own retries are off: `grade` retries, counting each attempt and its reason.
        if self.gpu:
            decorator = ray.remote(num_gpus=self.num_gpus, max_calls=1, max_retries=0, retry_exceptions=False)
        else:
            decorator = ray.remote(max_retries=0, retry_exceptions=False)
        self._remote: Any = decorator(run_request)

    def _place(self, resources: dict[str, float], num_gpus: float | None, num_cpus: float | None, concurrency: int | None) -> None:
        """Settle what each grade asks for and how many run at once, against the cluster's `resources`."""
        gpus, cpus = _cluster_count(resources, "GPU"), _cluster_count(resources, "CPU")
        if num_gpus is None:
            num_gpus = 1.0 if gpus > 0 else 0.0
        if num_gpus < 0 or (num_cpus is not None and num_cpus < 0):
            raise ExecutorError("num_gpus and num_cpus must not be negative")
        if num_gpus > 0 and gpus < num_gpus:
            raise ExecutorError(f"each grade asks for {num_gpus:g} GPU(s) but the Ray cluster has {gpus:g}; pass num_gpus=0 to grade on CPUs")
        if num_cpus is None:
            num_cpus = 1.0
        if num_gpus == 0 and (num_cpus <= 0 or cpus < num_cpus):
            raise ExecutorError(f"each grade asks for {num_cpus:g} CPU(s) but the Ray cluster has {cpus:g}")
        self.num_gpus, self.num_cpus = float(num_gpus), float(num_cpus)
        self.gpu = self.num_gpus > 0
        if concurrency is None:
            fits = [gpus / self.num_gpus] if self.gpu else []
            if self.num_cpus > 0:
                fits.append(cpus / self.num_cpus)
            concurrency = int(min(fits)) if fits else 1
        self.concurrency = max(1, concurrency)

    def _request(self, task: Task, submission: Path, options: GradeOptions) -> GradeRequest:
        return GradeRequest(
            bundle=task_bundle(task),
            spec_json=task.spec.model_dump_json(),
            submission_name=submission.name or "submission.py",
            submission=submission.read_bytes(),
            options_json=options.model_dump_json(),
            gpu=self.gpu,
            warm_pool=self.warm and not self.gpu,
        )

    def _attempt(self, request: GradeRequest) -> tuple[str, str]:
        import ray

        reference = self._remote.options(num_cpus=self.num_cpus, num_gpus=self.num_gpus).remote(request)
        with self._lock:
            self._in_flight.add(reference)
        try:
            kind, text = ray.get(reference)
        finally:
            with self._lock:
                self._in_flight.discard(reference)
        return str(kind), str(text)

    def grade(self, task: Task, submission: Path, options: GradeOptions | None = None) -> GradeResult:
        chosen = options or self.options
        started = time.monotonic()

        def failed(error: str) -> GradeResult:
            return infra_result(task, submission, error, chosen.sandbox, time.monotonic() - started)

        if self._closed.is_set():
            return failed("the ray executor is closed")
        if not submission.is_file():
            # The grader's own verdict for a missing file; no need to send it anywhere.
            return grade(task, submission, chosen, device="cpu")
        try:
            request = self._request(task, submission, chosen)
        except (TaskBundleError, OSError) as error:
            return failed(f"the task cannot be sent to Ray: {error}")
        lost: list[str] = []
        for attempt in range(1, self.max_retries + 2):
            try:
                kind, text = self._attempt(request)
            except Exception as error:  # noqa: BLE001 - Ray's failures become infra_error results
                if self._closed.is_set():
                    return failed(f"the ray executor was closed while the grade ran ({type(error).__name__})")
                reason, retryable = _describe(error)
                lost.append(f"attempt {attempt}: {reason}")
                if retryable and attempt <= self.max_retries:
                    log.warning("%s: %s; retrying (%d of %d)", task.id, reason, attempt, self.max_retries)
                    continue
                spent = attempt - 1
                budget = "no retries allowed" if self.max_retries == 0 else f"{spent} of {self.max_retries} retries spent"
                return failed(f"Ray lost the grade after {attempt} attempt(s), {budget}: " + "; ".join(lost))
            if kind != "result":
                return failed(f"the Ray worker could not grade: {text}")
            try:
                result = GradeResult.model_validate_json(text)
            except ValueError as error:
                return failed(f"the Ray worker returned no valid GradeResult: {_first_line(error)}")
            if result.task_id != task.id:
                return failed(f"the Ray worker graded {result.task_id}, not {task.id}")
            return result
        raise AssertionError("unreachable: the last attempt returns")

    def close(self) -> None:
        """Cancel the grades in flight (their `grade` calls return an infra_error), then disconnect from (or
        stop) the Ray this executor started; a Ray it found running is left running."""
        if self._closed.is_set():
            return
        self._closed.set()
        import ray

        with self._lock:
            in_flight = list(self._in_flight)
        for reference in in_flight:
            try:
                ray.cancel(reference, force=True)  # kills the worker: its bwrap sandbox dies with it
            except Exception as error:  # noqa: BLE001 - a grade that ended meanwhile, a Ray already gone
                log.debug("cancelling a grade: %s", error)
        if self._owns_ray:
            ray.shutdown()
