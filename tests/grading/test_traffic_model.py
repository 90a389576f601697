"""gym.grading.signal.traffic_model: the GPU profiles file, and modelled times on hand-made counts."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import torch

from gym.errors import KernelGymError, UnknownProfile
from gym.grading.signal.traffic_model import (
    ALIASES,
    SPECIAL_FLOPS,
    OpCost,
    launch_seconds,
    modelled_shape,
    modelled_speed,
    profile_named,
    reference_costs,
    shown_traffic,
    traffic_summary,
)
from gym.grading.timing.speed_of_light import DEVICES
from gym.tasks.model import Task
from gym.worker.traffic import BufferCount, LaunchCount, TrafficCounts
from tests.support.traffic_counts import counts_of

PROFILES = Path(__file__).resolve().parents[2] / "gym" / "grading" / "timing" / "gpu_profiles.toml"
H100_BANDWIDTH = 3.35e12
OVERHEAD = 3e-6
BENCH_N = 16777216  # l1/vector_add's benchmark shape


def test_every_profile_has_peaks_an_overhead_and_a_source() -> None:
    data = tomllib.loads(PROFILES.read_text())["profiles"]
    assert set(data) == set(DEVICES) and len(DEVICES) >= 4
    for name, peak in DEVICES.items():
        assert peak.bandwidth == pytest.approx(data[name]["bandwidth_tbps"] * 1e12)
        assert peak.launch_overhead_s == pytest.approx(data[name]["launch_overhead_us"] * 1e-6) and peak.launch_overhead_s > 0
        assert {"float32", "bfloat16"} <= set(peak.flops) and all(rate > 0 for rate in peak.flops.values())
        assert data[name]["source"].strip(), f"{name} cites no source"
    for named in ("H100 SXM", "A100 80GB", "L4", "MI300X"):
        assert named in DEVICES


@pytest.mark.parametrize(
    ("alias", "name"), [("h100", "H100 SXM"), ("A100", "A100 80GB"), ("l4", "L4"), ("mi300x", "MI300X"), ("h200", "H200"), (" B200 ", "B200")]
)
def test_aliases_and_names_resolve(alias: str, name: str) -> None:
    assert profile_named(alias)[0] == name
    assert profile_named(name) == (name, DEVICES[name])
    assert ALIASES[alias.strip().lower()] == name


def test_an_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(UnknownProfile) as caught:
        profile_named("TPU v9")
    assert isinstance(caught.value, KernelGymError)
    assert "'TPU v9'" in str(caught.value) and "H100 SXM" in str(caught.value) and "mi300x" in str(caught.value)


def test_a_launch_is_its_roofline_bound_plus_the_overhead() -> None:
    peak = DEVICES["H100 SXM"]
    assert launch_seconds(3.35e9, 0, peak, torch.float32) == pytest.approx(1e-3 + OVERHEAD)
    # float32 may use TF32 tensor cores: 494.7 TFLOP/s on the H100 SXM.
    assert launch_seconds(0, 494.7e12, peak, torch.float32) == pytest.approx(1.0 + OVERHEAD)
    assert launch_seconds(0, 989.4e12, peak, torch.bfloat16) == pytest.approx(1.0 + OVERHEAD)


def test_the_modelled_shape_is_the_first_bench_shape_scaled_by_the_minimum(vector_add: Task) -> None:
    shape, byte_scale, flop_scale = modelled_shape(vector_add, {"N": 1000}, torch.float32)
    assert shape == {"N": BENCH_N}
    # min_bytes = 3 N x 4, min_flops = N.
    assert byte_scale == pytest.approx(BENCH_N / 1000) and flop_scale == pytest.approx(BENCH_N / 1000)


def test_a_kernel_moving_the_minimum_models_as_fast_as_compile(vector_add: Task) -> None:
    counts = counts_of([(1, 8000, 4000, 1024)])
    traffic = traffic_summary(vector_add, "float32 public #1", {"N": 1000}, torch.float32, counts)
    assert traffic.traffic_ratio == pytest.approx(1.0) and traffic.min_bytes == 12000 and traffic.min_flops == 1000
    reference = [OpCost(op="aten.add", bytes=12000, flops=1000)]
    modelled = modelled_speed(vector_add, counts, traffic, reference, torch.float32, "h100")
    expected = 3 * BENCH_N * 4 / H100_BANDWIDTH + OVERHEAD
    assert modelled.profile == "H100 SXM" and modelled.label == "modelled on H100 SXM, not measured"
    assert modelled.shape == {"N": BENCH_N}
    assert modelled.candidate_s == pytest.approx(expected)
    assert modelled.eager_s == pytest.approx(expected) and modelled.compile_s == pytest.approx(expected)
    assert modelled.speedup_vs_eager == pytest.approx(1.0) and modelled.speedup_vs_compile == pytest.approx(1.0)
    assert modelled.bound == "memory" and modelled.launch_overhead_share == pytest.approx(OVERHEAD / expected)


def test_reading_twice_models_slower_in_proportion(vector_add: Task) -> None:
    counts = counts_of([(1, 12000, 4000, 1024)])  # x read twice
    traffic = traffic_summary(vector_add, "float32 public #1", {"N": 1000}, torch.float32, counts)
    assert traffic.traffic_ratio == pytest.approx(4 / 3)
    modelled = modelled_speed(vector_add, counts, traffic, [OpCost(op="aten.add", bytes=12000, flops=1000)], torch.float32)
    memory = 3 * BENCH_N * 4 / H100_BANDWIDTH
    assert modelled.speedup_vs_eager == pytest.approx((memory + OVERHEAD) / (memory * 4 / 3 + OVERHEAD))


def test_many_tiny_launches_are_launch_bound(vector_add: Task) -> None:
    # Counted at the bench shape itself: nothing is scaled.
    counts = counts_of([(1, 64, 64, 16)] * 12)
    traffic = traffic_summary(vector_add, "float32 bench #1", {"N": BENCH_N}, torch.float32, counts)
    modelled = modelled_speed(vector_add, counts, traffic, None, torch.float32)
    assert modelled.bound == "launch"
    assert modelled.candidate_s == pytest.approx(12 * (128 / H100_BANDWIDTH + OVERHEAD))
    assert modelled.launch_overhead_share == pytest.approx(12 * OVERHEAD / modelled.candidate_s) and modelled.launch_overhead_share > 0.99
    # No reference ops: no eager model, and no speedup made up for it.
    assert modelled.eager_s is None and modelled.speedup_vs_eager is None


def test_heavy_arithmetic_is_compute_bound(vector_add: Task) -> None:
    # Elementwise FLOPs run on CUDA cores: the A100's float32 rate, 19.5 TFLOP/s (not TF32's 156).
    counts = counts_of([(4, 1024, 1024, 10**15)])
    traffic = traffic_summary(vector_add, "float32 bench #1", {"N": BENCH_N}, torch.float32, counts)
    modelled = modelled_speed(vector_add, counts, traffic, None, torch.float32, "A100 80GB")
    assert modelled.bound == "compute" and modelled.profile == "A100 80GB"
    assert modelled.candidate_s == pytest.approx(10**15 / 19.5e12 + OVERHEAD)
    # The same FLOPs from tl.dot run on tensor cores (TF32).
    dots = _one_launch(bytes_read=1024, bytes_written=1024, flops=10**15, dot_flops=10**15)
    modelled = modelled_speed(
        vector_add, dots, traffic_summary(vector_add, "float32 bench #1", {"N": BENCH_N}, torch.float32, dots), None, torch.float32, "a100"
    )
    assert modelled.candidate_s == pytest.approx(10**15 / 156e12 + OVERHEAD)


def _one_launch(bytes_read: int, bytes_written: int, flops: int, dot_flops: int = 0, special: int = 0) -> TrafficCounts:
    row = LaunchCount(kernel="k", programs=1, bytes_read=bytes_read, bytes_written=bytes_written, flops=flops, dot_flops=dot_flops, special=special)
    return TrafficCounts(
        launches=[row], launch_total=1, programs=1, bytes_read=bytes_read, bytes_written=bytes_written, flops=flops, dot_flops=dot_flops, special=special
    )


def test_special_functions_cost_more_than_an_fma(vector_add: Task) -> None:
    # 1000 elements, 200 exp each at the counted shape: 200 special FLOPs per element, each the time of 8.
    counts = _one_launch(8000, 4000, 200 * 1000, special=200 * 1000)
    traffic = traffic_summary(vector_add, "float32 public #1", {"N": 1000}, torch.float32, counts)
    modelled = modelled_speed(vector_add, counts, traffic, [OpCost(op="aten.add", bytes=12000, flops=1000)], torch.float32)
    scale = BENCH_N / 1000
    assert modelled.bound == "compute"
    assert modelled.candidate_s == pytest.approx(200 * 1000 * SPECIAL_FLOPS * scale / 66.9e12 + OVERHEAD)
    assert modelled.speedup_vs_eager is not None and modelled.speedup_vs_eager < 0.2
    # Plain multiplies instead: 8x fewer FLOP-equivalents, memory-bound again.
    plain = _one_launch(8000, 4000, 200 * 1000)
    assert modelled_speed(vector_add, plain, traffic, None, torch.float32).bound == "memory"


def test_excess_flops_are_kept_when_scaled_to_the_bench_shape(vector_add: Task) -> None:
    # Before: the candidate's FLOPs became the task's minimum at the bench shape, whatever was counted.
    lean = _one_launch(8000, 4000, 1000)
    heavy = _one_launch(8000, 4000, 2000 * 1000)
    traffic = traffic_summary(vector_add, "float32 public #1", {"N": 1000}, torch.float32, lean)
    assert (
        modelled_speed(vector_add, heavy, traffic, None, torch.float32).candidate_s
        > 5 * modelled_speed(vector_add, lean, traffic, None, torch.float32).candidate_s
    )


def test_a_hidden_count_is_modelled_at_the_bench_shape_and_never_shown(vector_add: Task) -> None:
    counts = _one_launch(2 * 5003 * 4, 5003 * 4, 5003)
    counts.buffers = [BufferCount(name="x", bytes=5003 * 4, bytes_read=5003 * 4, bytes_written=0)]
    traffic = traffic_summary(vector_add, "float32 hidden #1", {"N": 5003}, torch.float32, counts)
    modelled = modelled_speed(vector_add, counts, traffic, [OpCost(op="aten.add", bytes=3 * 5003 * 4, flops=5003)], torch.float32)
    assert modelled.shape == {"N": BENCH_N} and modelled.speedup_vs_eager == pytest.approx(1.0)
    shown = shown_traffic(vector_add, traffic, counts, torch.float32)
    assert shown is not None and shown.shape == {"N": BENCH_N} and "5003" not in shown.model_dump_json()
    assert shown.bytes_read == 2 * BENCH_N * 4 and shown.flops == BENCH_N and shown.traffic_ratio == pytest.approx(1.0)
    assert shown.buffers[0].bytes == BENCH_N * 4 and shown.buffers[0].times_read == pytest.approx(1.0)
    # A public count is shown as counted.
    public = traffic_summary(vector_add, "float32 public #1", {"N": 1000}, torch.float32, counts)
    assert shown_traffic(vector_add, public, counts, torch.float32) is public


def test_the_reference_is_traced_op_by_op(vector_add: Task) -> None:
    x, y = torch.randn(1000), torch.randn(1000)
    costs = reference_costs(vector_add, {"x": x, "y": y}, {"N": 1000})
    assert [(cost.op, cost.bytes, cost.flops) for cost in costs] == [("aten.add", 12000, 1000)]
