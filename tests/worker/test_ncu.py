"""Nsight Compute's speed-of-light figures: the CSV parser, the notes where ncu cannot run, the grade's profile field."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from gym.grading.judging.verdict import WitnessFigures
from gym.grading.signal.training_signal import NCU_NEEDS_GPU, signal_fields, with_ncu
from gym.schema.signal import KernelProfile, KernelTime
from gym.tasks.loader import find_task
from gym.worker import ncu

HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'


def _row(kernel_id: int, kernel: str, metric: str, unit: str, value: str) -> str:
    return f'"{kernel_id}","4242","python3","127.0.0.1","{kernel}","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","GPU Speed Of Light Throughput","{metric}","{unit}","{value}"'


# What `ncu --section SpeedOfLight --csv` prints: its own log lines, then one row per kernel and metric.
CSV = "\n".join(
    [
        "==PROF== Connected to process 4242 (/usr/bin/python3)",
        '==PROF== Profiling "add_kernel" - 0: 0%....50%....100% - 8 passes',
        HEADER,
        _row(0, "add_kernel", "Memory Throughput", "%", "80.00"),
        _row(0, "add_kernel", "Compute (SM) Throughput", "%", "10.00"),
        _row(0, "add_kernel", "Duration", "usecond", "3.00"),
        _row(1, "scale_kernel", "Memory Throughput", "%", "40.00"),
        _row(1, "scale_kernel", "Compute (SM) Throughput", "%", "30.00"),
        _row(1, "scale_kernel", "Duration", "usecond", "1.00"),
        _row(2, "at::native::vectorized_elementwise_kernel", "Memory Throughput", "%", "1,000.00"),
        _row(2, "at::native::vectorized_elementwise_kernel", "Duration", "usecond", "9.00"),
        "==PROF== Disconnected from process 4242",
    ]
)


def test_the_figures_are_duration_weighted_over_the_candidates_kernels() -> None:
    memory, compute = ncu.parse_speed_of_light(CSV, {"add_kernel", "scale_kernel"})
    # (80 x 3 + 40 x 1) / 4 and (10 x 3 + 30 x 1) / 4; torch's own kernel is left out.
    assert memory == pytest.approx(70.0)
    assert compute == pytest.approx(15.0)


def test_every_kernel_counts_when_none_is_the_candidates() -> None:
    memory, _ = ncu.parse_speed_of_light(CSV, {"not_launched"})
    # (80 x 3 + 40 x 1 + 1000 x 9) / 13: the thousands separator is read.
    assert memory == pytest.approx((240 + 40 + 9000) / 13)


def test_no_rows_give_no_figures() -> None:
    assert ncu.parse_speed_of_light("==ERROR== no kernels were profiled\n", {"add_kernel"}) == (None, None)


def test_the_command_runs_the_replay_child_under_the_speed_of_light_section(tmp_path: Path) -> None:
    command = ncu.ncu_command("/opt/ncu", tmp_path / "in", tmp_path / "out", 3)
    assert command[:6] == ["/opt/ncu", "--section", "SpeedOfLight", "--csv", "--target-processes", "all"]
    assert command[-5:] == ["-m", "gym.worker.ncu", str(tmp_path / "in"), str(tmp_path / "out"), "3"]


def _fake_ncu(folder: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "ncu"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_a_missing_ncu_is_a_note_not_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    memory, compute, note = ncu.run_ncu(tmp_path, tmp_path, 0, {"add_kernel"})
    assert (memory, compute) == (None, None)
    assert note is not None and "not installed" in note


def test_counters_not_permitted_are_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(
        tmp_path, 'echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"\nexit 1\n', monkeypatch
    )
    memory, compute, note = ncu.run_ncu(tmp_path, tmp_path, 0, {"add_kernel"})
    assert (memory, compute) == (None, None)
    assert note is not None and "ERR_NVGPUCTRPERM" in note and "not permitted" in note


def test_an_ncu_that_answers_gives_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "answer.csv").write_text(CSV)
    _fake_ncu(tmp_path, f'cat "{tmp_path / "answer.csv"}"\n', monkeypatch)
    memory, compute, note = ncu.run_ncu(tmp_path, tmp_path, 0, {"add_kernel", "scale_kernel"})
    assert note is None
    assert memory == pytest.approx(70.0) and compute == pytest.approx(15.0)


def test_an_ncu_without_rows_says_what_it_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(tmp_path, 'echo "==WARNING== No kernels were profiled."\nexit 0\n', monkeypatch)
    _, _, note = ncu.run_ncu(tmp_path, tmp_path, 0, {"add_kernel"})
    assert note is not None and "No kernels were profiled" in note and "exit 0" in note


def test_the_grade_profile_on_a_cpu_says_ncu_needs_a_gpu() -> None:
    profile = with_ncu(None, None, "cpu")
    assert profile.note == NCU_NEEDS_GPU and profile.memory_throughput_pct is None
    task = find_task("l1/vector_add")
    fields = signal_fields(task, WitnessFigures(), "H100 SXM", ncu=True, device=torch.device("cpu"))
    assert fields["profile"].note == NCU_NEEDS_GPU
    assert "profile" not in signal_fields(task, WitnessFigures(), "H100 SXM", ncu=False, device=torch.device("cpu"))


def test_the_gpu_profile_gains_ncus_figures_or_its_note() -> None:
    profiled = KernelProfile(tool="torch.profiler", kernels=[KernelTime(name="add_kernel", triton=True, calls=1, device_us=3.0)])
    both = with_ncu(profiled, (70.0, 15.0, None), "cuda")
    assert (both.tool, both.memory_throughput_pct, both.compute_throughput_pct, both.note) == ("torch.profiler+ncu", 70.0, 15.0, None)
    assert both.kernels == profiled.kernels
    refused = with_ncu(profiled, (None, None, "counters not permitted"), "cuda")
    assert refused.memory_throughput_pct is None and refused.note == "counters not permitted"
