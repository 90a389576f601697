"""Speed-of-light bounds from the device table."""

from __future__ import annotations

import torch

from gym.grading.timing.speed_of_light import DEVICES, bound_seconds, find_device
from gym.tasks.loader import find_task


def test_device_names_resolve_to_the_most_specific_entry() -> None:
    assert find_device("NVIDIA H100 80GB HBM3") is DEVICES["H100 SXM"]
    assert find_device("NVIDIA H100 PCIe") is DEVICES["H100 PCIe"]
    assert find_device("NVIDIA H200") is DEVICES["H200"]
    assert find_device("NVIDIA A100-SXM4-80GB") is DEVICES["A100 80GB"]
    assert find_device("NVIDIA L40S") is DEVICES["L40S"]
    assert find_device("AMD Instinct MI300X") is DEVICES["MI300X"]
    assert find_device("cpu") is None


def test_memory_bound_task_uses_bandwidth_above_the_cache() -> None:
    task = find_task("l1/vector_add")
    big = {"N": 1 << 26}  # 3 x 256 MiB moved: far above any L2
    bound = bound_seconds(task, big, torch.float32, "NVIDIA H100 80GB HBM3")
    assert bound is not None
    assert abs(bound - 3 * 4 * (1 << 26) / 3.35e12) < 1e-9
    # A working set that fits in cache has no bandwidth bound (only the tiny compute bound).
    small = bound_seconds(task, {"N": 1000}, torch.float32, "NVIDIA H100 80GB HBM3")
    assert small is None or small < 1e-9


def test_compute_bound_task_uses_the_fastest_honest_rate() -> None:
    task = find_task("l1/matmul")
    shape = {"M": 4096, "N": 4096, "K": 4096}
    fp32 = bound_seconds(task, shape, torch.float32, "NVIDIA H200")
    fp16 = bound_seconds(task, shape, torch.float16, "NVIDIA H200")
    assert fp32 is not None and fp16 is not None
    assert abs(fp32 - 2 * 4096**3 / 494.7e12) / fp32 < 1e-6  # float32 may use TF32 tensor cores
    assert fp16 < fp32


def test_h100_variants_do_not_fall_back_to_the_sxm_entry() -> None:
    assert find_device("NVIDIA H100 NVL") is DEVICES["H100 NVL"]
    assert find_device("NVIDIA H100 PCIe") is DEVICES["H100 PCIe"]
    assert find_device("NVIDIA H100 80GB HBM3") is DEVICES["H100 SXM"]


def test_the_devices_own_l2_size_replaces_the_tables(monkeypatch) -> None:
    from types import SimpleNamespace

    from gym.grading.timing import speed_of_light

    task = find_task("l1/vector_add")
    # 3 * N * 4 bytes = 240 MB: memory-bound against the table's 50 MB L2 (4x = 200 MB),
    # cache-resident against a reported 100 MB (4x = 400 MB), leaving only the compute term.
    shape = {"N": 20_000_000}
    table = bound_seconds(task, shape, torch.float32, "NVIDIA H200")
    reported = bound_seconds(task, shape, torch.float32, "NVIDIA H200", cache_bytes=100 << 20)
    assert table is not None and reported is not None
    assert table == 240e6 / 4.8e12
    assert reported == 20_000_000 / (494.7e12) < table
    monkeypatch.setattr(speed_of_light.torch.cuda, "get_device_properties", lambda device: SimpleNamespace(L2_cache_size=60 * 1000 * 1000))
    assert speed_of_light.device_cache_bytes(torch.device("cuda", 0)) == 60_000_000
    assert speed_of_light.device_cache_bytes(torch.device("cpu")) is None
