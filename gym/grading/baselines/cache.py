"""The on-disk cache of reference baselines: eager PyTorch (and torch.compile on a GPU)
timings of a task's reference at one timed shape, measured once and reused by every
later grade that would measure exactly the same thing.

An entry is keyed by everything its figures depend on (`BaselineKey`): the task's id
and version (and a digest of its reference and input code, so an edited reference
without a version bump is a miss, not a stale figure), the shape and dtype, the device
model, the torch / CUDA / Triton versions and the whole timing policy. The file name
holds a hash of the key, and the entry stores the key itself: on read the stored key
must equal the wanted one field for field, so a hash collision, a hand-edited file or a
format change is never taken for a hit. A file that does not parse (torn, corrupt, an
older format) is a miss and is rewritten by the next measurement.

Writes go to a temporary file in the cache folder and are moved into place with
`os.replace`, so readers in any process see a whole entry or none; two processes
that miss at once both measure, and the last to finish wins (either entry is valid).

Where: `KGYM_BASELINE_CACHE`, else `$XDG_CACHE_HOME/kgym/baselines`, else
`~/.cache/kgym/baselines`; every function here also takes the folder as an argument.
Only timings live here: correctness is always checked against outputs computed from
fresh inputs in the grade itself.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gym import settings
from gym.errors import BaselineCacheError
from gym.grading.timing.timing_policy import TimingPolicy
from gym.log import get_logger
from gym.schema.result import TimingSummary
from gym.tasks.model import Shape, Task

log = get_logger("grading")

# Bumped when the entry's layout or meaning changes: entries of another format are misses.
ENTRY_FORMAT = 1
CACHE_ENV = "KGYM_BASELINE_CACHE"


def default_cache_dir() -> Path:
    """`KGYM_BASELINE_CACHE`, else `$XDG_CACHE_HOME/kgym/baselines`, else `~/.cache/kgym/baselines`."""
    override = settings.baseline_cache_override()
    if override is not None:
        return override
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser().resolve() / "kgym" / "baselines"


@functools.cache
def _cpu_model() -> str:
    """The host CPU's model name (/proc/cpuinfo on Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def device_model(device: torch.device) -> str:
    """What the figures were measured on: the GPU's name with its SM count and memory (a MIG slice of a GPU
    is not the whole GPU), or "cpu: <model>" (interpreted timings differ per CPU too)."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return f"{props.name}, {props.multi_processor_count} SMs, {props.total_memory >> 30} GiB"
    return f"cpu: {_cpu_model()}"


def _triton_version() -> str | None:
    try:
        import triton
    except ImportError:
        return None
    return str(triton.__version__)


def reference_digest(task: Task) -> str:
    """sha256 of what the reference's timing depends on besides the task version: the reference and input
    modules' source (an imported KernelBench task: its problem file), their names and the bound options."""
    digest = hashlib.sha256()
    spec = task.spec
    digest.update(json.dumps([spec.reference, spec.inputs, spec.options], sort_keys=True, default=str).encode())
    if spec.kernelbench is not None:
        files = [task.folder / spec.kernelbench.problem_file]
    else:
        modules = dict.fromkeys(target.split(":", 1)[0] for target in (spec.reference, spec.inputs) if target)
        files = [task.references_dir / f"{module}.py" for module in modules]
    for path in files:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(f"unreadable:{path.name}".encode())
    return digest.hexdigest()


class BaselineKey(BaseModel):
    """Everything a cached baseline's figures depend on; an entry is used only when its stored key equals this."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(description='The task, e.g. "l1/softmax".')
    task_version: int = Field(description="The task's version (bumped whenever anything that changes grades changes).")
    reference_sha256: str = Field(description="reference_digest(): the reference and input code and options, in case a version bump was missed.")
    dtype: str = Field(description='The timed dtype, e.g. "float32".')
    shape: dict[str, int] = Field(description="The timed shape's parameters.")
    device: str = Field(description='The device model: "<GPU name>, <SMs> SMs, <memory> GiB", or "cpu: <CPU model>".')
    torch: str = Field(description="torch.__version__ of the measuring process.")
    cuda: str | None = Field(description="torch.version.cuda (None for a CPU build).")
    triton: str | None = Field(description="triton.__version__ (None when Triton is not installed).")
    policy: TimingPolicy = Field(description="The whole timing policy (warm-up, first round, stopping rule) the figures were measured under.")

    def digest(self) -> str:
        """A stable hash of every field (the file name's; the entry itself is compared field by field)."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


def baseline_key(task: Task, dtype: str, shape: Shape, device: torch.device, policy: TimingPolicy) -> BaselineKey:
    """The key of `task`'s reference timed at (`dtype`, `shape`) on this device, this process's versions, under `policy`."""
    return BaselineKey(
        task_id=task.id,
        task_version=task.spec.version,
        reference_sha256=reference_digest(task),
        dtype=dtype,
        shape=dict(shape),
        device=device_model(device),
        torch=torch.__version__,
        cuda=torch.version.cuda,
        triton=_triton_version(),
        policy=policy,
    )


class BaselineEntry(BaseModel):
    """One cached baseline, as stored on disk (one JSON file per key)."""

    model_config = ConfigDict(extra="forbid")

    format: int = Field(default=ENTRY_FORMAT, description="The entry layout's version (ENTRY_FORMAT); another one is a miss.")
    key: BaselineKey = Field(description="The full key the figures were measured for; compared field by field on read.")
    measured_at: str = Field(description="ISO-8601 UTC time the measurement finished.")
    origin: Literal["grade", "warm"] = Field(description='Who measured it: a grade that missed the cache, or "kgym baselines warm".')
    eager: TimingSummary = Field(description="The eager reference: median, spread, rse and reps (the repetitions it was measured with).")
    eager_stop_reason: str | None = Field(default=None, description='Why the eager timing stopped: "rse_target", "max_reps" or "budget".')
    compiled: TimingSummary | None = Field(
        default=None, description="The reference under torch.compile (dynamic=False); None on CPU, where it is never measured."
    )
    compiled_stop_reason: str | None = Field(default=None, description="Why the torch.compile timing stopped, when there is one.")


def now_iso() -> str:
    """Now, as entries record it (ISO-8601 UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class BaselineCache:
    """The cache folder: `load(key)` an entry (None on a miss), `store(entry)` one atomically."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root).expanduser().resolve() if root is not None else default_cache_dir()

    def path_for(self, key: BaselineKey) -> Path:
        """`<root>/<task id with / as __>-<dtype>-<key hash>.json` (readable names; the key decides)."""
        slug = _UNSAFE.sub("_", key.task_id.replace("/", "__"))
        return self.root / f"{slug}-{_UNSAFE.sub('_', key.dtype)}-{key.digest()[:32]}.json"

    def load(self, key: BaselineKey) -> BaselineEntry | None:
        """The entry stored for `key`, or None: absent, unreadable, corrupt or partial, another format, or
        measured for a key that differs in any field (never used, whatever the file name says)."""
        path = self.path_for(key)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            raw = json.loads(text)
            entry = BaselineEntry.model_validate(raw)
        except (ValidationError, ValueError) as error:
            log.info("ignoring unreadable baseline %s: %s", path, str(error).splitlines()[0] if str(error) else type(error).__name__)
            return None
        # The stored key exactly as written (no defaults filled in) must be the wanted one, field for field.
        if entry.format != ENTRY_FORMAT or raw.get("key") != key.model_dump(mode="json") or entry.key != key:
            return None
        return entry

    def store(self, entry: BaselineEntry, *, strict: bool = False) -> Path | None:
        """Write `entry` atomically (a temp file in the folder, then os.replace), replacing any entry of its key.

        A folder that cannot be written is logged and skipped (a grade still has its figures), unless
        `strict`, when it raises BaselineCacheError. Returns the entry's path (None when it was not written)."""
        path = self.path_for(entry.key)
        temp: str | None = None
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.root, prefix=f".{path.stem}.", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(entry.model_dump_json(indent=2))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, path)
            temp = None
        except OSError as error:
            if strict:
                raise BaselineCacheError(f"cannot write the baseline cache at {self.root}: {error}") from error
            log.warning("baseline cache %s not written: %s", self.root, error)
            return None
        finally:
            if temp is not None:  # a failed write leaves no temp file behind
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        return path
