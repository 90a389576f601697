"""scripts/gpu_check.py and gpu_check.sh without a GPU: budgets, the row-by-row report, the
summary, reading both shapes of grade timings; the CPU run itself is `make gpu-selftest`."""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from gym.tasks.loader import find_task
from tests.support.static_files import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu_check() -> ModuleType:
    return load_script("gpu_check")


def _summary(median_s: float, rse: float = 0.01, reps: int = 20) -> SimpleNamespace:
    return SimpleNamespace(median_s=median_s, rse=rse, reps=reps)


def test_shape_entries_read_per_shape_timings(gpu_check: ModuleType) -> None:
    task = find_task("l1/cumsum")
    entry = SimpleNamespace(
        trial="float32 bench #2",
        shape={"M": 256, "N": 131072},
        candidate=_summary(2e-3),
        reference=_summary(4e-3),
        compiled=_summary(3e-3),
        speedup_vs_eager=2.0,
        speedup_vs_compile=1.5,
        sol_fraction=0.5,
        stop_reason="rse_target",
        compiled_note=None,
    )
    result = SimpleNamespace(timings=SimpleNamespace(shapes=[entry]))
    [row] = gpu_check.shape_entries(task, result)
    assert row["shape"] == {"M": 256, "N": 131072}
    assert row["candidate"] == {"median_ms": 2.0, "rse": 0.01, "reps": 20}
    assert (row["speedup_vs_eager"], row["speedup_vs_compile"], row["sol_fraction"]) == (2.0, 1.5, 0.5)


def test_shape_entries_fall_back_to_the_top_level_figures(gpu_check: ModuleType) -> None:
    """A grade from before per-shape timings: one timed trial, its shape known from its label."""
    task = find_task("l1/cumsum")
    timings = SimpleNamespace(trial="float32 bench #1", candidate=_summary(1e-3), reference=_summary(2e-3), compiled=None, stop_reason="budget")
    result = SimpleNamespace(timings=timings, speedup_vs_eager=2.0, speedup_vs_compile=None, sol_fraction=0.25)
    [row] = gpu_check.shape_entries(task, result)
    assert row["shape"] == dict(task.spec.shapes.bench[0])
    assert row["trial"] == "float32 bench #1" and row["compiled"] is None
    assert (row["speedup_vs_eager"], row["sol_fraction"]) == (2.0, 0.25)
    assert gpu_check.shape_entries(task, SimpleNamespace(timings=None)) == []
    assert gpu_check.shape_of_label(task, "float32 hidden #1") is None


def test_comparison_shape_is_the_first_bench_shape_on_cuda(gpu_check: ModuleType) -> None:
    task = find_task("l1/cumsum")
    assert gpu_check.comparison_shape(task, "cuda") == ("bench", dict(task.spec.shapes.bench[0]))
    assert gpu_check.comparison_shape(task, "cpu") == ("public", dict(task.spec.shapes.public[0]))


def test_run_child_stops_a_child_at_its_deadline(gpu_check: ModuleType, tmp_path: Path) -> None:
    row_file = tmp_path / "row.json"
    command = [sys.executable, "-c", "import time; time.sleep(60)"]
    row, why = gpu_check.run_child(command, 0.5, tmp_path / "log", row_file, grace_s=2.0)
    assert row is None and why.startswith(gpu_check.KILLED)
    command = [sys.executable, "-c", f"import json; open({str(row_file)!r}, 'w').write(json.dumps({{'status': 'passed'}}))"]
    assert gpu_check.run_child(command, 30, tmp_path / "log", row_file) == ({"status": "passed"}, None)
    row_file.unlink()
    row, why = gpu_check.run_child([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], 30, tmp_path / "log", row_file)
    assert row is None and why.startswith(gpu_check.CHECK_ERROR) and "exited 3" in why and "boom" in why


class _FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _probe_row() -> dict[str, Any]:
    return {
        "python": "3.12.3",
        "torch": "2.11.0",
        "triton": "3.6.0",
        "device": "cuda",
        "gpu": "NVIDIA H200",
        "tasks": ["l1/vector_add", "l1/softmax", "l1/silu", "l1/cumsum"],
        "sandbox": "process",
        "sandbox_note": "process backend, NOT isolated: bwrap is not installed",
        "isolated": False,
    }


def _passed_row(task: str) -> dict[str, Any]:
    entry = {
        "trial": "float32 bench #1",
        "shape": {"N": 1 << 26},
        "candidate": {"median_ms": 0.5, "rse": 0.004, "reps": 40},
        "speedup_vs_eager": 1.02,
        "speedup_vs_compile": 0.98,
        "sol_fraction": 0.87,
    }
    return {
        "status": "passed",
        "sandbox": "process",
        "shapes": [entry],
        "compared_shape": entry["shape"],
        "compared_trial": entry["trial"],
        "do_bench_ms": 0.49,
        "ours_vs_do_bench": 0.5 / 0.49,
    }


def test_the_check_writes_each_row_as_it_goes_and_skips_what_the_budget_cannot_hold(
    gpu_check: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = _FakeClock()
    report = tmp_path / "out" / gpu_check.REPORT_FILE
    seen: list[int] = []
    limits: list[float] = []

    def fake_run_child(command: list[str], timeout_s: float, log: Path, row_file: Path) -> tuple[dict[str, Any] | None, str | None]:
        kind = command[command.index("--child") + 1]
        config = json.loads(Path(command[command.index("--config") + 1]).read_text())
        if kind == "probe":
            clock.now += 5
            return _probe_row(), None
        seen.append(len(report.read_text().splitlines()))  # the rows before this one are already on disk
        limits.append(timeout_s)
        if config["task"] == "l1/softmax":
            clock.now += timeout_s
            return None, f"{gpu_check.KILLED}: stopped after 90 s, its budget of 90 s spent"
        clock.now += min(timeout_s, 80 if config["task"] == "l1/vector_add" else 60)
        return _passed_row(config["task"]), None

    monkeypatch.setattr(gpu_check, "clock", clock)
    monkeypatch.setattr(gpu_check, "run_child", fake_run_child)
    code = gpu_check.main(["--out", str(tmp_path / "out"), "--budget-s", "240", "--grade-budget-s", "90", "--min-start-s", "20"])
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert [row["row"] for row in rows] == ["run", "task", "task", "task", "task", "end"]
    assert seen == [1, 2, 3]
    assert limits == [90, 90, 65]  # the last grade gets what is left of the total
    tasks = rows[1:5]
    assert [row["status"] for row in tasks] == ["passed", "killed", "passed", "skipped"]
    assert all(row["sandbox"] == "process" and "NOT isolated" in row["sandbox_note"] and row["isolated"] is False for row in tasks)
    assert "total budget of 240 s spent" in tasks[3]["reason"]
    assert rows[-1]["not_passed"] == ["l1/softmax"]
    assert code == 1  # a killed grade fails the check; skipped tasks alone would not

    summary = (tmp_path / "out" / gpu_check.SUMMARY_FILE).read_text().splitlines()
    assert summary == capsys.readouterr().out.splitlines()[-len(summary) :]
    assert len(summary) <= 24 and max(len(line) for line in summary) <= 160
    assert "NVIDIA H200" in summary[0] and "NOT isolated" in summary[1]
    vector_add = next(line for line in summary if line.startswith("l1/vector_add"))
    for figure in ("0.5000", "1.02x", "0.98x", "87%", "0.4%", "0.4900", "1.02"):
        assert figure in vector_add


def test_cpu_rows_say_do_bench_is_not_available(gpu_check: ModuleType) -> None:
    row = {**_passed_row("l1/vector_add"), "task": "l1/vector_add", "do_bench_ms": None, "ours_vs_do_bench": None, "do_bench_note": "n/a on CPU"}
    lines = gpu_check.summary_lines({"sandbox": "process", "sandbox_note": "x"}, [row], 10.0, 240.0, Path("r.jsonl"))
    assert "n/a on CPU" in next(line for line in lines if line.startswith("l1/vector_add"))


@pytest.mark.skipif(bool(glob.glob("/dev/nvidia[0-9]*")) or shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_gpu_check_sh_without_a_gpu_exits_at_once() -> None:
    done = subprocess.run([str(ROOT / "scripts" / "gpu_check.sh")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "no NVIDIA GPU here" in done.stderr and "--selftest" in done.stderr


def test_modelled_vs_measured_rank_correlation(gpu_check: ModuleType) -> None:
    assert gpu_check.ranks([3.0, 1.0, 2.0, 2.0]) == [4.0, 1.0, 2.5, 2.5]
    assert gpu_check.spearman([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) == pytest.approx(1.0)
    assert gpu_check.spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    # d = (0, 1, -1, 0): 1 - 6 x 2 / (4 x 15) = 0.8
    assert gpu_check.spearman([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]) == pytest.approx(0.8)
    assert gpu_check.spearman([1.0, 2.0], [1.0, 2.0]) is None
    rows = [
        {"status": "passed", "modelled_speedup_vs_eager": 1.0, "speedup_vs_eager": 0.9},
        {"status": "passed", "modelled_speedup_vs_eager": 2.0, "speedup_vs_eager": 1.8},
        {"status": "passed", "modelled_speedup_vs_eager": 3.0, "speedup_vs_eager": 2.5},
        {"status": "wrong_answer", "modelled_speedup_vs_eager": None, "speedup_vs_eager": None},
    ]
    assert gpu_check.modelled_line(rows).endswith("Spearman rank correlation 1.00 over 3 passed tasks")
