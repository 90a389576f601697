"""Which device each grade runs on: one GPU per grade, the CPU shared.

A grade's timings compare its kernel with the reference on one device, so
both must have that GPU to themselves: two grades timed on one GPU at once
measure each other. `DevicePool` leases each concurrent grade a slot for its
whole duration (its jobs, its timing rounds, its reference baselines, which the
trusted side times on the same device): a GPU slot to one grade at a time, the
one CPU slot to up to `concurrency` grades at once (interpreted timings only
check the harness). The sandbox then shows the worker only that GPU
(`Job.gpu_index`, see `gym.devices.nvidia`).

The pool is the in-process scheduler. The guarantee across processes is
`gym.devices.lock.holding`, which `grade()` takes for the whole grade;
the pool does not take it itself (its in-process lock is not reentrant), and
since the pool never leases a GPU twice, that lock only ever waits on another
gym process on this host.

Devices are numbered as the trusted process numbers them (`cuda:N`, an index
into the host's CUDA_VISIBLE_DEVICES when that is set); `DeviceSlot.index` is
the host's own index of that GPU (the one nvidia-smi shows), as
`gym.devices.nvidia.host_device_entry` names it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch

from gym.devices import nvidia
from gym.errors import SandboxUnavailable


@dataclass(frozen=True)
class DeviceSlot:
    """One device grades can be placed on."""

    # Where the grade runs, as the trusted process numbers it: cuda:N, or cpu.
    device: torch.device
    # The host's index of the GPU (nvidia-smi's); None on CPU, or when the host names the GPU
    # in a way that has no index (a MIG device, a UUID the driver does not list).
    index: int | None
    # The device's name ("NVIDIA H200"; "cpu" for the CPU slot).
    name: str
    # The GPU's UUID ("GPU-..."); None on CPU or when it cannot be read.
    uuid: str | None

    @property
    def is_gpu(self) -> bool:
        return self.device.type == "cuda"


CPU_SLOT = DeviceSlot(torch.device("cpu"), None, "cpu", None)


@dataclass(frozen=True)
class SmiGpu:
    """One row of `nvidia-smi --query-gpu=index,name,uuid`."""

    index: int
    name: str
    uuid: str


@functools.cache
def nvidia_smi_gpus() -> tuple[SmiGpu, ...]:
    """The GPUs nvidia-smi lists, in its (host, PCI) order; empty without nvidia-smi. Read once per process."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        done = subprocess.run([smi, "--query-gpu=index,name,uuid", "--format=csv,noheader"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if done.returncode != 0:
        return ()
    return tuple(parse_smi(done.stdout))


def parse_smi(text: str) -> list[SmiGpu]:
    """The rows of nvidia-smi's `index,name,uuid` CSV (a name may hold commas; index and UUID cannot)."""
    rows: list[SmiGpu] = []
    for line in text.splitlines():
        index, _, rest = line.partition(",")
        name, _, uuid = rest.rpartition(",")
        if index.strip().isdigit() and uuid.strip():
            rows.append(SmiGpu(int(index), name.strip(), uuid.strip()))
    return rows


def host_index(cuda_index: int, environ: Mapping[str, str] | None = None) -> int | None:
    """The host's index of the trusted process's cuda:`cuda_index`.

    The GPU is the one `nvidia.host_device_entry` names (entry `cuda_index` of
    the host's CUDA_VISIBLE_DEVICES, else the index itself), which is the GPU
    the sandbox binds. A number is the index; a "GPU-..." UUID (or unique
    prefix) is looked up, in /proc/driver/nvidia (PCI order, nvidia-smi's
    numbering) or else in nvidia-smi; None for a MIG name, a UUID neither knows,
    or an index the host's list does not have.
    """
    try:
        entry = nvidia.host_device_entry(cuda_index, environ)
    except SandboxUnavailable:
        return None
    if re.fullmatch(r"\d+", entry):
        return int(entry)
    if not entry.startswith("GPU-"):
        return None
    proc = [position for position, gpu in enumerate(nvidia.host_gpus()) if gpu.uuid.startswith(entry)]
    if len(proc) == 1:
        return proc[0]
    smi = [gpu.index for gpu in nvidia_smi_gpus() if gpu.uuid.startswith(entry)]
    return smi[0] if len(smi) == 1 else None


def _uuid_text(raw: object, entry: str | None) -> str | None:
    """A device property's UUID in nvidia-smi's form: torch prints the bare UUID, nvidia-smi prefixes
    "GPU-" ("MIG-" for a MIG device, which the host's entry then names)."""
    text = str(raw).strip() if raw is not None else ""
    if not text or set(text) <= {"0", "-"}:
        return None
    if text.startswith(("GPU-", "MIG-")):
        return text
    return ("MIG-" if entry is not None and entry.startswith("MIG-") else "GPU-") + text


def describe(device: torch.device, environ: Mapping[str, str] | None = None) -> DeviceSlot:
    """The slot `device` names, with its host index, name and UUID (never raises).

    `cuda` without an index means the current device. The name and UUID come
    from torch's device properties, else nvidia-smi's row for the host index;
    the name is "unknown" when neither can tell. Any other device type is the
    CPU slot.
    """
    if device.type != "cuda":
        return CPU_SLOT
    try:
        cuda_index = device.index if device.index is not None else torch.cuda.current_device()
    except Exception:  # noqa: BLE001 - no CUDA: the default device is 0
        cuda_index = 0
    index = host_index(cuda_index, environ)
    try:
        entry: str | None = nvidia.host_device_entry(cuda_index, environ)
    except SandboxUnavailable:
        entry = None
    name: str | None = None
    uuid: str | None = None
    try:
        properties = torch.cuda.get_device_properties(cuda_index)
        name = str(properties.name) or None
        uuid = _uuid_text(getattr(properties, "uuid", None), entry)
    except Exception:  # noqa: BLE001 - torch cannot see it: ask nvidia-smi
        pass
    if name is None or uuid is None:
        row = next((gpu for gpu in nvidia_smi_gpus() if gpu.index == index), None) if index is not None else None
        if row is not None:
            name = name or row.name
            uuid = uuid or row.uuid
    return DeviceSlot(torch.device("cuda", cuda_index), index, name or "unknown", uuid)


def host_devices(environ: Mapping[str, str] | None = None) -> list[DeviceSlot]:
    """The GPUs this process can use (cuda:0 .. cuda:count-1), else the one CPU slot.

    Tests and callers that place grades themselves pass their own list to
    `DevicePool` (or `LocalExecutor(devices=...)`) instead.
    """
    try:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - a broken CUDA install is a CPU host
        count = 0
    if count == 0:
        return [CPU_SLOT]
    return [describe(torch.device("cuda", i), environ) for i in range(count)]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_concurrency(slots: Sequence[DeviceSlot]) -> int:
    """Grades to run at once on `slots`: one per GPU on a GPU host, one per usable CPU on a CPU host."""
    gpus = sum(1 for slot in slots if slot.is_gpu)
    return gpus if gpus else usable_cpus()


class DevicePool:
    """Leases devices to grades: a GPU to one grade at a time, the CPU slot to up to `concurrency`.

    At most `concurrency` grades hold a lease at once. A grade that finds no
    device free waits in line: leases are granted first come, first served (a
    free device always goes to the grade that has waited longest, so none
    starves), each to the first free slot in list order. Thread-safe; a lease
    is returned when its block ends, by an exception too.
    """

    def __init__(self, slots: Sequence[DeviceSlot], concurrency: int | None = None) -> None:
        if not slots:
            raise ValueError("a device pool needs at least one device")
        devices = [slot.device for slot in slots]
        if len(set(devices)) != len(devices):
            raise ValueError(f"a device is listed twice: {', '.join(str(device) for device in devices)}")
        for slot in slots:
            if slot.is_gpu and slot.device.index is None:
                raise ValueError(f"GPU slot {slot.name!r} must name its index (cuda:N), not bare cuda")
            if slot.device.type not in ("cuda", "cpu"):
                raise ValueError(f"unsupported device {slot.device}")
        self.slots: tuple[DeviceSlot, ...] = tuple(slots)
        self.concurrency = default_concurrency(self.slots) if concurrency is None else concurrency
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {self.concurrency}")
        self._lock = threading.Lock()
        self._held: dict[DeviceSlot, int] = {slot: 0 for slot in self.slots}
        self._total = 0
        # One condition per waiting grade, oldest first; only the head is ever woken.
        self._line: deque[threading.Condition] = deque()

    def grades_per_device(self, slot: DeviceSlot) -> int:
        """How many grades `slot` is leased to at once: 1 for a GPU, `concurrency` for the CPU slot."""
        if slot not in self._held:
            raise ValueError(f"{slot.device} is not one of this pool's devices")
        return 1 if slot.is_gpu else self.concurrency

    @property
    def capacity(self) -> int:
        """The most grades that can hold a lease at once."""
        return min(self.concurrency, sum(self.grades_per_device(slot) for slot in self.slots))

    def held(self, slot: DeviceSlot) -> int:
        """Grades holding `slot` now."""
        with self._lock:
            return self._held[slot]

    @property
    def waiting(self) -> int:
        """Grades waiting for a device now."""
        with self._lock:
            return len(self._line)

    def _free_slot(self) -> DeviceSlot | None:
        if self._total >= self.concurrency:
            return None
        return next((slot for slot in self.slots if self._held[slot] < self.grades_per_device(slot)), None)

    def _wake_head(self) -> None:
        if self._line:
            self._line[0].notify()

    def acquire(self, timeout: float | None = None) -> DeviceSlot:
        """Wait in line for a device and take it; `release` it when done (prefer `lease`).
        TimeoutError after `timeout` seconds, leaving the line."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            turn = threading.Condition(self._lock)
            self._line.append(turn)
            try:
                while True:
                    slot = self._free_slot() if self._line[0] is turn else None
                    if slot is not None:
                        break
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise TimeoutError(f"no device free within {timeout} s")
                    turn.wait(remaining)
            except BaseException:
                self._line.remove(turn)
                self._wake_head()
                raise
            self._line.popleft()
            self._held[slot] += 1
            self._total += 1
            # The next in line may find a device too (the CPU slot, another free GPU).
            self._wake_head()
            return slot

    def release(self, slot: DeviceSlot) -> None:
        """Return a device `acquire` gave."""
        with self._lock:
            if self._held.get(slot, 0) <= 0:
                raise ValueError(f"{slot.device} is not leased")
            self._held[slot] -= 1
            self._total -= 1
            self._wake_head()

    @contextlib.contextmanager
    def lease(self, timeout: float | None = None) -> Iterator[DeviceSlot]:
        """Hold a device for the block: the slot the grade runs on (all its jobs and baselines).
        Blocks until one is free (TimeoutError after `timeout` seconds)."""
        slot = self.acquire(timeout)
        try:
            yield slot
        finally:
            self.release(slot)
