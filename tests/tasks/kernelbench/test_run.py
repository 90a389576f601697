"""`kgym run --agent replay` over imported KernelBench tasks, then the leaderboard built from that run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from gym.cli import app
from gym.tasks.kernelbench.importer import ImportReport

from .conftest import SUBMISSIONS


def test_a_replay_run_over_kernelbench_tasks_and_its_leaderboard(tmp_path: Path, kb_root: Path, kb_import: ImportReport) -> None:
    replay = tmp_path / "replay"
    (replay / "kb/l1").mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "level1_1_ReLU__honest.py", replay / "kb/l1/1_relu.py")
    shutil.copy(SUBMISSIONS / "level1_1_ReLU__decoy.py", replay / "kb/l1/8_scale_by_scalar.py")
    out = tmp_path / "run"
    runner = CliRunner()
    done = runner.invoke(
        app,
        [
            "--tasks",
            str(kb_root),
            "run",
            "--agent",
            "replay",
            "--replay-dir",
            str(replay),
            "--task",
            "kb/l1/1_relu",
            "--task",
            "kb/l1/8_scale_by_scalar",
            "--attempts",
            "1",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    statuses = {line["task_id"]: line["status"] for line in lines}
    # A ReLU submitted for the scale-by-scalar problem does not even take its inputs.
    assert statuses["kb/l1/1_relu"] == "passed" and statuses["kb/l1/8_scale_by_scalar"] not in {"passed", "infra_error"}, statuses
    site = tmp_path / "site"
    built = runner.invoke(app, ["--tasks", str(kb_root), "leaderboard", "build", str(out), "--out", str(site)])
    assert built.exit_code == 0, built.output
    board = json.loads((site / "leaderboard.json").read_text())
    assert any(result["task_id"] == "kb/l1/1_relu" for board_ in board["boards"] for row in board_["rows"] for result in row["results"])
