"""The `kgym` CLI: a thin shell whose outputs and exit codes users rely on."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gym.cli import app
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import discover

runner = CliRunner()


def test_list_json_names_every_task() -> None:
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {row["id"] for row in rows} == {task.id for task in discover().tasks}
    assert all(set(row) >= {"id", "version", "title", "dtypes", "contract"} for row in rows)


def test_list_suite_filter() -> None:
    result = runner.invoke(app, ["list", "--suite", "no-such-suite", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def test_list_skips_a_broken_task(tmp_path: Path, monkeypatch) -> None:
    root = Path(__file__).resolve().parent.parent
    (tmp_path / "tasks" / "l1").mkdir(parents=True)
    (tmp_path / "tasks" / "l1" / "vector_add").symlink_to(root / "tasks" / "l1" / "vector_add")
    broken = tmp_path / "tasks" / "l1" / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text('id = "l1/broken"\nversion = 1\ncolour = "blue"\n')
    (tmp_path / "references").symlink_to(root / "references")
    monkeypatch.setenv("KGYM_ROOT", str(tmp_path))
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0
    assert [row["id"] for row in json.loads(result.stdout)] == ["l1/vector_add"]
    assert "broken/task.toml: colour: unknown key" in result.stderr


def test_show_prints_the_prompt_without_hidden_shapes() -> None:
    for task in discover().tasks:
        result = runner.invoke(app, ["show", task.id])
        assert result.exit_code == 0, result.output
        assert task.spec.title in result.stdout
        assert f"def kernel({', '.join(task.spec.params)})" in result.stdout
        public = [str(shape) for shape in task.spec.shapes.public]
        for shape in task.spec.shapes.hidden:
            if str(shape) not in public:
                assert str(shape) not in result.stdout, (task.id, shape)


def test_show_unknown_task_exits_2() -> None:
    result = runner.invoke(app, ["show", "l1/nope"])
    assert result.exit_code == 2
    assert "no such task" in result.stderr


def test_grade_json_and_exit_codes(tmp_path: Path) -> None:
    task = next(task for task in discover().tasks if task.id == "l1/vector_add")
    passed = runner.invoke(app, ["grade", "l1/vector_add", str(task.solution_path), "--json"])
    assert passed.exit_code == 0, passed.output
    assert GradeResult.model_validate_json(passed.stdout).status == Status.passed
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import torch\ndef kernel(x, y):\n    return torch.zeros_like(x)\n")
    failed = runner.invoke(app, ["grade", "l1/vector_add", str(wrong), "--json"])
    assert failed.exit_code == 1
    graded = GradeResult.model_validate_json(failed.stdout)
    assert graded.status == Status.rejected and "no_triton_launch" in graded.integrity_flags
    human = runner.invoke(app, ["grade", "l1/vector_add", str(wrong)])
    assert human.exit_code == 1
    assert "rejected" in human.stdout


def test_doctor_quick_reports_versions() -> None:
    result = runner.invoke(app, ["doctor", "--quick"])
    assert "torch" in result.stdout and "sandbox process" in result.stdout
    assert result.exit_code == 0, result.stdout


def test_doctor_fails_when_the_default_sandbox_is_missing(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = runner.invoke(app, ["doctor", "--quick"])
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "bubblewrap" in result.stdout


def test_kgym_serve_binds_loopback_and_answers(tmp_path) -> None:
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "gym.cli", "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        answer = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert answer is not None and answer.status_code == 200, server.stdout.read().decode() if server.poll() is not None else "no answer"
        tasks = httpx.get(f"http://127.0.0.1:{port}/tasks", timeout=5).json()
        assert any(task["id"] == "l1/vector_add" for task in (tasks["tasks"] if isinstance(tasks, dict) else tasks))
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_grade_takes_a_gpu_profile_and_refuses_unknown_ones(tmp_path: Path) -> None:
    task = next(task for task in discover().tasks if task.id == "l1/vector_add")
    graded = runner.invoke(app, ["grade", "l1/vector_add", str(task.solution_path), "--json", "--gpu-profile", "l4", "--no-confirm"])
    assert graded.exit_code == 0, graded.output
    result = GradeResult.model_validate_json(graded.stdout)
    assert result.modelled is not None and result.modelled.label == "modelled on L4, not measured"
    assert result.traffic_ratio is not None and result.confirmation is None
    unknown = runner.invoke(app, ["grade", "l1/vector_add", str(task.solution_path), "--json", "--gpu-profile", "TPU v9"])
    assert unknown.exit_code == 1 and GradeResult.model_validate_json(unknown.stdout).status == Status.infra_error
    bad = runner.invoke(app, ["grade", "l1/vector_add", str(task.solution_path), "--profile", "nsys"])
    assert bad.exit_code == 2 and "--profile takes" in bad.output


def test_run_records_the_reward_preset_and_refuses_a_resume_under_another(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = runner.invoke(app, ["run", "--agent", "solutions", "--task", "l1/vector_add", "--attempts", "1", "--out", str(out), "--reward", "kernrl"])
    assert ran.exit_code == 0, ran.output
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["config"]["reward"]["preset"] == "kernrl" and manifest["config"]["reward"]["failed"] == -0.25
    again = runner.invoke(app, ["run", "--agent", "solutions", "--task", "l1/vector_add", "--attempts", "1", "--out", str(out), "--resume"])
    assert again.exit_code != 0 and "--reward kernrl, not default" in again.output
    unknown = runner.invoke(app, ["run", "--agent", "solutions", "--task", "l1/vector_add", "--out", str(tmp_path / "other"), "--reward", "fastest"])
    assert unknown.exit_code == 2 and "unknown reward preset 'fastest'" in unknown.output


def test_doctor_detects_the_openai_gym_shadowing_the_import_name(tmp_path: Path, monkeypatch) -> None:
    """A second distribution that provides the top-level `gym` (the retired OpenAI Gym) is a doctor failure."""
    import importlib.metadata
    import sys

    info = tmp_path / "gym-0.26.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gym\nVersion: 0.26.2\n")
    (info / "top_level.txt").write_text("gym\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "gym" in importlib.metadata.packages_distributions()["gym"]
    result = runner.invoke(app, ["doctor", "--quick"])
    assert result.exit_code == 1
    assert "import name gym" in result.stdout and "also provided by gym" in result.stdout
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry != str(tmp_path)])
    clean = runner.invoke(app, ["doctor", "--quick"])
    assert "provided by kernel-gym alone" in " ".join(clean.stdout.split())


def test_log_level_sets_what_the_kgym_logger_writes(monkeypatch) -> None:
    import logging

    from gym.log import configure

    try:
        result = runner.invoke(app, ["--log-level", "debug", "list", "--suite", "l1"])
        assert result.exit_code == 0 and logging.getLogger("kgym").level == logging.DEBUG
        refused = runner.invoke(app, ["--log-level", "chatty", "list"])
        assert refused.exit_code == 2 and "--log-level" in refused.output
    finally:
        configure("warning")


def test_every_cli_error_ends_through_fail() -> None:
    """No command prints an error and raises typer.Exit by hand: each goes through gym.cli.common.fail."""
    import ast

    import gym.cli

    folder = Path(gym.cli.__file__).parent
    pairs = []
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            for body in (getattr(node, field, None) for field in ("body", "orelse", "finalbody", "handlers")):
                if not isinstance(body, list):
                    continue
                for first, second in zip(body, body[1:], strict=False):
                    printed = (
                        isinstance(first, ast.Expr) and "print(" in ast.unparse(first) and ("errors" in ast.unparse(first) or "console" in ast.unparse(first))
                    )
                    exit_code = second.exc.args[0] if isinstance(second, ast.Raise) and isinstance(second.exc, ast.Call) and second.exc.args else None
                    constant = isinstance(exit_code, ast.Constant) and exit_code.value not in (0, 130)
                    if printed and constant and "typer.Exit" in ast.unparse(second) and "(to or errors)" not in ast.unparse(first):
                        pairs.append(f"{path.name}:{first.lineno}")
    assert not pairs, pairs
