"""The feedback sentences the training signal makes (gym.grading.feedback.signal_feedback), on hand-made grades."""

from __future__ import annotations

import torch

from gym.grading.feedback import signal_feedback, write_feedback
from gym.grading.signal.traffic_model import modelled_speed, traffic_summary
from gym.schema.result import GradeResult, Status
from gym.schema.signal import KernelProfile, KernelTime
from gym.tasks.model import Task
from tests.support.fake_grades import fake_grade
from tests.support.traffic_counts import counts_of


def with_signal(task: Task, launches: list[tuple[int, int, int, int]], buffers: list[tuple[str, int, int, int]], shape: dict[str, int]) -> GradeResult:
    counts = counts_of(launches, buffers, kernel="_add")
    traffic = traffic_summary(task, "float32 public #1", shape, torch.float32, counts)
    modelled = modelled_speed(task, counts, traffic, None, torch.float32)
    grade = fake_grade(task.id, "code", Status.passed)
    return grade.model_copy(update={"traffic": traffic, "traffic_ratio": traffic.traffic_ratio, "modelled": modelled})


def test_a_buffer_read_three_times_is_named(vector_add: Task) -> None:
    n = 1000
    result = with_signal(vector_add, [(1, 4 * n * 4, n * 4, n)], [("x", 4 * n, 3 * 4 * n, 0), ("y", 4 * n, 4 * n, 0), ("output #1", 4 * n, 0, 4 * n)], {"N": n})
    lines = signal_feedback(result)
    assert lines[0].startswith("Traffic (counted in a replay of your kernels alone, float32 public #1 {'N': 1000}): 1 launch(es)")
    assert "1.67x the minimum" in lines[0]
    assert "`x` read 3 times" in lines[0] and "`y` read once" in lines[0] and "`output #1` written once" in lines[0]
    assert any(line.startswith("Modelled on H100 SXM at {'N': 16777216}, not measured") and line.endswith("memory-bound.") for line in lines)


def test_launch_overhead_over_many_launches_says_fuse_them(vector_add: Task) -> None:
    n = 16777216
    # Twelve launches of 64 bytes each, counted at the bench shape: the overhead is nearly all of it.
    result = with_signal(vector_add, [(1, 32, 32, 8)] * 12, [("output #1", 4096, 0, 384)], {"N": n})
    lines = signal_feedback(result)
    fuse = [line for line in lines if line.endswith("fuse them.")]
    assert fuse and fuse[0].startswith("100% of modelled time is launch overhead: 12 launches for 4.1 KB of output")


def test_one_launch_is_never_told_to_fuse(vector_add: Task) -> None:
    result = with_signal(vector_add, [(1, 32, 32, 8)], [("output #1", 4096, 0, 32)], {"N": 16777216})
    assert result.modelled is not None and result.modelled.launch_overhead_share > 0.5
    assert not any("fuse" in line for line in signal_feedback(result))


def test_excess_flops_are_pointed_out(vector_add: Task) -> None:
    n = 1000
    result = with_signal(vector_add, [(1, 2 * n * 4, n * 4, 4 * n)], [], {"N": n})
    assert any(line.startswith("Your kernels do 4.00x the minimum FLOPs (4,000 vs 1,000)") for line in signal_feedback(result))


def test_a_grade_without_a_signal_has_no_signal_sentences() -> None:
    result = fake_grade("l1/vector_add", "code", Status.passed)
    assert signal_feedback(result) == []
    assert "Traffic" not in write_feedback(result) and "Modelled" not in write_feedback(result)


def test_the_profile_and_ncu_figures_are_said() -> None:
    profile = KernelProfile(
        tool="torch.profiler+ncu",
        kernels=[KernelTime(name="_add_kernel", triton=True, calls=1, device_us=30.0), KernelTime(name="elementwise", triton=False, calls=1, device_us=10.0)],
        memory_throughput_pct=82.0,
        compute_throughput_pct=11.0,
    )
    result = fake_grade("l1/vector_add", "code", Status.passed).model_copy(update={"profile": profile, "triton_time_share": 0.75})
    lines = signal_feedback(result)
    assert (
        "Profile (torch.profiler+ncu, one untimed replay): Triton kernels took 75% of the profiled call's device time; "
        "2 device kernel(s), 40 us in all; slowest _add_kernel (30 us)." in lines
    )
    assert "Nsight Compute: memory throughput 82% of peak, compute 11% of peak." in lines
