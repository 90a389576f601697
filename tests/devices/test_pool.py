"""The device pool, checked without a GPU: fake device lists of 1, 2 and 4 GPUs and the CPU slot,
leased from threads; the host's devices and the grade's environment fingerprint from a faked torch.cuda."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from gym.devices import nvidia
from gym.devices import pool as devices
from gym.devices.pool import CPU_SLOT, DevicePool, DeviceSlot, SmiGpu, default_concurrency, describe, host_devices, host_index, parse_smi
from gym.schema.result import Environment

# Long enough never to fire on a loaded machine; only a broken pool waits for it.
PATIENCE_S = 10.0


def fake_gpus(count: int) -> list[DeviceSlot]:
    return [DeviceSlot(torch.device("cuda", i), i, "NVIDIA H200", f"GPU-{i:04d}") for i in range(count)]


def start(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def join_all(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(PATIENCE_S)
        assert not thread.is_alive(), "a grade never got a device"


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.001)


class Tracker:
    """Counts the grades on each device at every moment, and the most there ever were."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active: dict[DeviceSlot, int] = {}
        self.peak: dict[DeviceSlot, int] = {}
        self.intervals: dict[DeviceSlot, list[tuple[float, float]]] = {}
        self.total = 0
        self.peak_total = 0

    def grade(self, slot: DeviceSlot, seconds: float) -> None:
        with self.lock:
            self.active[slot] = self.active.get(slot, 0) + 1
            self.peak[slot] = max(self.peak.get(slot, 0), self.active[slot])
            self.total += 1
            self.peak_total = max(self.peak_total, self.total)
            began = time.monotonic()
        time.sleep(seconds)
        with self.lock:
            self.active[slot] -= 1
            self.total -= 1
            self.intervals.setdefault(slot, []).append((began, time.monotonic()))


@pytest.mark.parametrize("count", [1, 2, 4])
def test_concurrent_grades_never_share_a_gpu(count: int) -> None:
    slots = fake_gpus(count)
    # More grades at once than GPUs: the extra ones wait for a GPU, never double up.
    pool = DevicePool(slots, concurrency=2 * count + 1)
    tracker = Tracker()

    def worker() -> None:
        for _ in range(4):
            with pool.lease() as slot:
                tracker.grade(slot, 0.002)

    join_all([start(worker) for _ in range(2 * count + 1)])
    assert set(tracker.peak) <= set(slots)
    assert all(peak == 1 for peak in tracker.peak.values()), tracker.peak
    assert tracker.peak_total <= count
    for slot, intervals in tracker.intervals.items():
        intervals.sort()
        assert all(end <= later for (_, end), (later, _) in zip(intervals, intervals[1:], strict=False)), f"{slot.device} was shared"
    assert sum(len(intervals) for intervals in tracker.intervals.values()) == 4 * (2 * count + 1)
    assert all(pool.held(slot) == 0 for slot in slots) and pool.waiting == 0


@pytest.mark.parametrize("count", [1, 2, 4])
def test_overlapping_grades_each_get_a_gpu_of_their_own(count: int) -> None:
    pool = DevicePool(fake_gpus(count), concurrency=count)
    # Every grade waits inside its lease for all the others: they must all hold a GPU at once.
    together = threading.Barrier(count, timeout=PATIENCE_S)
    got: list[DeviceSlot] = []

    def worker() -> None:
        with pool.lease() as slot:
            got.append(slot)
            together.wait()

    join_all([start(worker) for _ in range(count)])
    assert sorted(slot.device.index for slot in got) == list(range(count))


def test_a_waiting_grade_gets_the_gpu_freed_next() -> None:
    slots = fake_gpus(2)
    pool = DevicePool(slots, concurrency=4)
    first, second = pool.acquire(), pool.acquire()
    assert (first, second) == (slots[0], slots[1])
    got: list[DeviceSlot] = []
    waiter = start(lambda: got.append(pool.acquire()))
    wait_until(lambda: pool.waiting == 1)
    assert got == []
    pool.release(second)
    join_all([waiter])
    assert got == [slots[1]] and pool.held(slots[1]) == 1
    later = start(lambda: got.append(pool.acquire()))
    wait_until(lambda: pool.waiting == 1)
    pool.release(first)
    join_all([later])
    assert got == [slots[1], slots[0]]


@pytest.mark.parametrize("slots", [fake_gpus(1), fake_gpus(2), [CPU_SLOT]], ids=["1-gpu", "2-gpus", "cpu"])
def test_grades_get_their_device_first_come_first_served(slots: list[DeviceSlot]) -> None:
    pool = DevicePool(slots, concurrency=len(slots))
    held = [pool.acquire() for _ in slots]
    order: list[int] = []
    order_lock = threading.Lock()

    def grade(number: int) -> Callable[[], None]:
        def run() -> None:
            with pool.lease():
                with order_lock:
                    order.append(number)

        return run

    threads = []
    for number in range(6):
        threads.append(start(grade(number)))
        # Line the grades up one by one, so their arrival order is known.
        wait_until(lambda number=number: pool.waiting == number + 1)
    for slot in held:
        pool.release(slot)
    join_all(threads)
    if len(slots) == 1:
        assert order == list(range(6))
    else:
        # Two grades run at once, so the order they record in may swap within a pair; a grade never
        # overtakes one that arrived two places before it.
        assert sorted(order) == list(range(6))
        assert all(position - 1 <= number for position, number in enumerate(order)), order


def test_a_late_grade_does_not_overtake_the_one_waiting() -> None:
    slots = fake_gpus(1)
    pool = DevicePool(slots, concurrency=1)
    held = pool.acquire()
    order: list[str] = []
    first = start(lambda: order.append("first") if pool.acquire() else None)
    wait_until(lambda: pool.waiting == 1)
    pool.release(held)
    join_all([first])
    # "first" now holds the GPU; a new grade waits behind it and gets it when "first" is done.
    second = start(lambda: order.append("second") if pool.acquire() else None)
    wait_until(lambda: pool.waiting == 1)
    with pytest.raises(TimeoutError):
        pool.acquire(timeout=0.01)
    assert pool.waiting == 1
    pool.release(slots[0])
    join_all([second])
    assert order == ["first", "second"]


def test_a_lease_is_returned_when_the_grade_raises() -> None:
    slots = fake_gpus(1)
    pool = DevicePool(slots, concurrency=2)
    with pytest.raises(RuntimeError, match="boom"):
        with pool.lease() as slot:
            assert pool.held(slot) == 1
            raise RuntimeError("boom")
    assert pool.held(slots[0]) == 0
    # A grade waiting behind one that raises gets the GPU.
    holding = threading.Event()
    release = threading.Event()
    errors: list[BaseException] = []

    def failing() -> None:
        try:
            with pool.lease():
                holding.set()
                release.wait(PATIENCE_S)
                raise ValueError("the grade failed")
        except ValueError as error:
            errors.append(error)

    got: list[DeviceSlot] = []
    threads = [start(failing)]
    assert holding.wait(PATIENCE_S)
    threads.append(start(lambda: got.append(pool.acquire())))
    wait_until(lambda: pool.waiting == 1)
    release.set()
    join_all(threads)
    assert len(errors) == 1 and got == slots


def test_a_grade_that_gives_up_waiting_leaves_the_line() -> None:
    slots = fake_gpus(1)
    pool = DevicePool(slots, concurrency=1)
    held = pool.acquire()
    patient: list[DeviceSlot] = []
    waiter = start(lambda: patient.append(pool.acquire()))
    wait_until(lambda: pool.waiting == 1)
    began = time.monotonic()
    with pytest.raises(TimeoutError):
        with pool.lease(timeout=0.02):
            pytest.fail("the GPU is held")
    assert time.monotonic() - began >= 0.02
    assert pool.waiting == 1
    pool.release(held)
    join_all([waiter])
    assert patient == slots and pool.waiting == 0


def test_the_cpu_slot_is_shared_by_concurrency_grades() -> None:
    pool = DevicePool([CPU_SLOT], concurrency=3)
    assert pool.grades_per_device(CPU_SLOT) == 3 and pool.capacity == 3
    held = [pool.acquire(timeout=PATIENCE_S) for _ in range(3)]
    assert held == [CPU_SLOT] * 3 and pool.held(CPU_SLOT) == 3
    with pytest.raises(TimeoutError):
        pool.acquire(timeout=0.01)
    pool.release(CPU_SLOT)
    assert pool.acquire(timeout=PATIENCE_S) == CPU_SLOT


def test_threads_share_the_cpu_slot_up_to_concurrency() -> None:
    pool = DevicePool([CPU_SLOT], concurrency=3)
    tracker = Tracker()

    def worker() -> None:
        for _ in range(3):
            with pool.lease() as slot:
                tracker.grade(slot, 0.002)

    join_all([start(worker) for _ in range(6)])
    assert 1 <= tracker.peak[CPU_SLOT] <= 3


def test_concurrency_below_the_gpu_count_leaves_gpus_idle() -> None:
    slots = fake_gpus(4)
    pool = DevicePool(slots, concurrency=2)
    assert pool.capacity == 2 and all(pool.grades_per_device(slot) == 1 for slot in slots)
    assert [pool.acquire(), pool.acquire()] == slots[:2]
    with pytest.raises(TimeoutError):
        pool.acquire(timeout=0.01)
    pool.release(slots[0])
    assert pool.acquire(timeout=PATIENCE_S) == slots[0]


def test_the_pool_refuses_lists_it_cannot_schedule() -> None:
    with pytest.raises(ValueError, match="at least one"):
        DevicePool([], 1)
    with pytest.raises(ValueError, match="twice"):
        DevicePool([*fake_gpus(2), fake_gpus(1)[0]], 2)
    with pytest.raises(ValueError, match="cuda:N"):
        DevicePool([DeviceSlot(torch.device("cuda"), 0, "GPU", None)], 1)
    with pytest.raises(ValueError, match="at least 1"):
        DevicePool(fake_gpus(1), 0)
    pool = DevicePool(fake_gpus(1), 1)
    with pytest.raises(ValueError, match="not one of"):
        pool.grades_per_device(CPU_SLOT)
    with pytest.raises(ValueError, match="not leased"):
        pool.release(pool.slots[0])
    assert DevicePool(fake_gpus(4)).concurrency == 4


def test_default_concurrency_is_the_gpus_or_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_concurrency(fake_gpus(1)) == 1
    assert default_concurrency(fake_gpus(4)) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert default_concurrency([CPU_SLOT]) == 3
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert default_concurrency([CPU_SLOT]) == 64
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert default_concurrency([CPU_SLOT]) == 1


# --- the host's devices, from a faked torch.cuda ---


class FakeCuda:
    """What the faked torch.cuda reports: properties per index, and the current device."""

    def __init__(self, properties: dict[int, SimpleNamespace]) -> None:
        self.properties = properties
        self.current = 0


@pytest.fixture
def fake_cuda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCuda:
    """torch.cuda with three GPUs (distinct names and UUIDs per index, as torch prints them),
    current device 0, no /proc/driver/nvidia, no nvidia-smi, no CUDA_VISIBLE_DEVICES."""
    properties = {
        0: SimpleNamespace(name="NVIDIA A100", uuid="aaaa0000-0000-0000-0000-000000000001"),
        1: SimpleNamespace(name="NVIDIA H100", uuid="bbbb0000-0000-0000-0000-000000000002"),
        2: SimpleNamespace(name="NVIDIA H200", uuid="cccc0000-0000-0000-0000-000000000003"),
    }
    cuda = FakeCuda(properties)

    def get_device_properties(device: object = None) -> SimpleNamespace:
        index = device.index if isinstance(device, torch.device) else device
        assert isinstance(index, int), f"asked for {device!r}, not one GPU"
        return cuda.properties[index]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(cuda.properties))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: cuda.current)
    monkeypatch.setattr(torch.cuda, "get_device_properties", get_device_properties)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: pytest.fail("get_device_name ignores which GPU"))
    monkeypatch.setattr(nvidia, "PROC_GPUS", tmp_path / "no-proc")
    monkeypatch.setattr(devices, "nvidia_smi_gpus", lambda: ())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return cuda


def test_host_devices_lists_every_gpu_with_its_name_and_uuid(fake_cuda: FakeCuda) -> None:
    assert host_devices() == [
        DeviceSlot(torch.device("cuda", 0), 0, "NVIDIA A100", "GPU-aaaa0000-0000-0000-0000-000000000001"),
        DeviceSlot(torch.device("cuda", 1), 1, "NVIDIA H100", "GPU-bbbb0000-0000-0000-0000-000000000002"),
        DeviceSlot(torch.device("cuda", 2), 2, "NVIDIA H200", "GPU-cccc0000-0000-0000-0000-000000000003"),
    ]
    assert default_concurrency(host_devices()) == 3


def test_host_devices_numbers_host_indices_through_the_hosts_visible_devices(fake_cuda: FakeCuda, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1,6")
    slots = host_devices()
    assert [(str(slot.device), slot.index) for slot in slots] == [("cuda:0", 3), ("cuda:1", 1), ("cuda:2", 6)]


def test_a_cpu_host_has_one_cpu_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert host_devices() == [CPU_SLOT]
    assert CPU_SLOT == DeviceSlot(torch.device("cpu"), None, "cpu", None)
    assert describe(torch.device("cpu")) == CPU_SLOT


def test_without_a_uuid_property_nvidia_smi_tells(fake_cuda: FakeCuda, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cuda.properties[1] = SimpleNamespace(name="NVIDIA H100")  # an older torch: no .uuid
    monkeypatch.setattr(devices, "nvidia_smi_gpus", lambda: (SmiGpu(0, "NVIDIA A100", "GPU-a"), SmiGpu(5, "NVIDIA H100", "GPU-from-smi")))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,5")
    assert describe(torch.device("cuda", 1)) == DeviceSlot(torch.device("cuda", 1), 5, "NVIDIA H100", "GPU-from-smi")
    monkeypatch.setattr(devices, "nvidia_smi_gpus", lambda: ())
    assert describe(torch.device("cuda", 1)).uuid is None


def test_describe_never_raises_when_torch_cannot_see_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "current_device", lambda: (_ for _ in ()).throw(RuntimeError("no CUDA")))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: (_ for _ in ()).throw(AssertionError("Invalid device id")))
    monkeypatch.setattr(devices, "nvidia_smi_gpus", lambda: ())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert describe(torch.device("cuda")) == DeviceSlot(torch.device("cuda", 0), 0, "unknown", None)


def write_proc(root: Path, gpus: list[tuple[str, int, str]]) -> Path:
    for bus_id, minor, uuid in gpus:
        folder = root / bus_id
        folder.mkdir(parents=True)
        (folder / "information").write_text(f"Model: \t\t NVIDIA H200\nGPU UUID: \t {uuid}\nBus Location: \t {bus_id}\nDevice Minor: \t {minor}\n")
    return root


def test_host_index_follows_the_hosts_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvidia, "PROC_GPUS", write_proc(tmp_path / "proc", [("0000:c1:00.0", 0, "GPU-cccc"), ("0000:18:00.0", 3, "GPU-aaaa")]))
    monkeypatch.setattr(devices, "nvidia_smi_gpus", lambda: (SmiGpu(7, "NVIDIA H200", "GPU-smi-only"),))
    assert host_index(2, {}) == 2
    assert host_index(1, {"CUDA_VISIBLE_DEVICES": "4, 6"}) == 6
    # A UUID is the GPU's position in PCI order (nvidia-smi's index), not its minor number.
    assert host_index(0, {"CUDA_VISIBLE_DEVICES": "GPU-cccc,GPU-aaaa"}) == 1
    assert host_index(1, {"CUDA_VISIBLE_DEVICES": "GPU-cccc,GPU-aa"}) == 0
    assert host_index(0, {"CUDA_VISIBLE_DEVICES": "GPU-smi-only"}) == 7
    assert host_index(0, {"CUDA_VISIBLE_DEVICES": "GPU-nobody"}) is None
    assert host_index(0, {"CUDA_VISIBLE_DEVICES": "MIG-1234"}) is None
    assert host_index(2, {"CUDA_VISIBLE_DEVICES": "0,1"}) is None


def test_parse_smi_reads_index_name_and_uuid() -> None:
    text = "0, NVIDIA H200, GPU-1111\n1, NVIDIA GeForce RTX 4090, Founders, GPU-2222\n\nNo devices were found\n"
    assert parse_smi(text) == [SmiGpu(0, "NVIDIA H200", "GPU-1111"), SmiGpu(1, "NVIDIA GeForce RTX 4090, Founders", "GPU-2222")]


# --- the grade's environment fingerprint ---


def test_the_environment_records_the_grades_gpu(fake_cuda: FakeCuda, monkeypatch: pytest.MonkeyPatch) -> None:
    from gym.grading import grader

    monkeypatch.setattr(grader, "driver_version", lambda: "565.57.01")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6,2")
    env = grader.environment(torch.device("cuda", 1), "bwrap", None)
    assert (env.device, env.gpu, env.gpu_index, env.gpu_uuid, env.driver) == (
        "cuda",
        "NVIDIA H100",
        6,
        "GPU-bbbb0000-0000-0000-0000-000000000002",
        "565.57.01",
    )
    # Bare "cuda" is the current device.
    fake_cuda.current = 2
    env = grader.environment(torch.device("cuda"), "docker", None)
    assert (env.gpu, env.gpu_index, env.gpu_uuid) == ("NVIDIA H200", 2, "GPU-cccc0000-0000-0000-0000-000000000003")
    cpu = grader.environment(torch.device("cpu"), "bwrap", None)
    assert (cpu.gpu, cpu.gpu_index, cpu.gpu_uuid, cpu.driver) == (None, None, None, None)


def test_old_results_without_the_gpu_fields_still_load() -> None:
    old = {"python": "3.11", "torch": "2.13.0", "triton": "3.7.1", "platform": "linux", "device": "cuda", "gpu": "NVIDIA H200", "sandbox": "bwrap"}
    env = Environment.model_validate(old)
    assert env.gpu == "NVIDIA H200" and env.gpu_index is None and env.gpu_uuid is None
    again = Environment.model_validate_json(env.model_copy(update={"gpu_index": 3, "gpu_uuid": "GPU-x"}).model_dump_json())
    assert (again.gpu_index, again.gpu_uuid) == (3, "GPU-x")


# --- the local executor places each grade through the pool ---


def test_the_local_executor_runs_each_grade_on_a_gpu_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gym.execution.local import LocalExecutor
    from gym.grading import grader

    slots = fake_gpus(2)
    tracker = Tracker()
    devices_seen: list[torch.device] = []

    def fake_grade(task: object, submission: Path, options: object, *, device: torch.device, **keywords: object) -> str:
        slot = next(slot for slot in slots if slot.device == device)
        devices_seen.append(device)
        tracker.grade(slot, 0.002)
        return "graded"

    monkeypatch.setattr(grader, "grade", fake_grade)
    executor = LocalExecutor(devices=slots, warm=False)
    assert executor.concurrency == 2
    results: list[object] = []
    threads = [start(lambda: results.extend(executor.grade(object(), tmp_path / "s.py") for _ in range(3))) for _ in range(5)]
    join_all(threads)
    executor.close()
    assert results == ["graded"] * 15 and set(devices_seen) == {slot.device for slot in slots}
    assert all(peak == 1 for peak in tracker.peak.values()), tracker.peak
