"""How each backend is configured: the flags that make the jail, checked without running it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.errors import SandboxUnavailable
from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import Job, Limits, available_sandboxes, get_sandbox
from gym.sandbox import base as sandbox_base
from gym.sandbox.bwrap import BwrapSandbox, runtime_python
from gym.sandbox.staging import WORKER_PACKAGE, stage_worker, worker_files
from gym.schema.result import Status


def make_job(tmp_path: Path, device: str = "cpu") -> Job:
    for name in ("in", "out", "scratch"):
        (tmp_path / name).mkdir()
    return Job(in_dir=tmp_path / "in", out_dir=tmp_path / "out", scratch_dir=tmp_path / "scratch", device=device, limits=Limits(memory_bytes=123 << 20))


def test_bwrap_is_the_default_everywhere() -> None:
    import inspect

    from gym.cli import grade as cli
    from gym.execution import batch
    from gym.grading import grader
    from gym.sandbox import DEFAULT_SANDBOX

    assert DEFAULT_SANDBOX == "bwrap"
    assert grader.GradeOptions.model_fields["sandbox"].default == "bwrap"
    assert inspect.signature(batch.grade_many).parameters["sandbox"].default == "bwrap"
    assert inspect.signature(cli.grade_command).parameters["sandbox"].default == "bwrap"


def test_bwrap_command_isolates(tmp_path: Path) -> None:
    job = make_job(tmp_path)
    command = BwrapSandbox().command(job, 61005, runtime_python())
    text = " ".join(command)
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop ALL", "--clearenv"):
        assert flag in text
    assert f"--data={123 << 20}" in text and "--nproc=" in text and "--fsize=" in text and "--core=0" in text
    assert f"--ro-bind {job.in_dir} /job/in" in text and f"--bind {job.out_dir} /job/out" in text
    assert "--share-net" not in text
    for forbidden in ("tasks", "references", str(Path.home())):
        assert f"--ro-bind {forbidden}" not in text and f" {Path.cwd() / forbidden} " not in text
    assert "TRITON_INTERPRET" in command[command.index("--setenv") + 1 :]
    if command[0] == "setpriv":
        assert "--reuid=61005" in command and "--no-new-privs" in command and "--bounding-set=-all" in command
    assert command[-6:] == [str(runtime_python()), "-P", "-m", "gym.worker", "/job/in", "/job/out"]


def test_docker_options_isolate(tmp_path: Path) -> None:
    pytest.importorskip("docker")
    from gym.sandbox.docker_backend import container_options

    options = container_options(make_job(tmp_path), 61007)
    assert options["network_mode"] == "none"
    assert options["read_only"] is True
    assert options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["user"] == "61007:61007"
    assert options["mem_limit"] == 123 << 20 and options["pids_limit"] > 0
    assert options["volumes"][str(tmp_path / "in")]["mode"] == "ro"
    assert "device_requests" not in options
    (tmp_path / "gpu").mkdir()
    gpu = container_options(make_job(tmp_path / "gpu", device="cuda"), 61007)
    assert "device_requests" in gpu
    assert gpu["environment"]["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
    assert "NVIDIA_DRIVER_CAPABILITIES" not in options["environment"]


def test_staged_worker_modules_are_enough(tmp_path: Path) -> None:
    import subprocess
    import sys

    lib = stage_worker(tmp_path / "lib")
    # The staged folder is the whole worker package, and nothing else of the gym.
    assert [p.name for p in (lib / "gym").iterdir()] == ["worker"]
    staged = sorted(str(p.relative_to(lib / "gym" / "worker")) for p in (lib / "gym" / "worker").rglob("*.py"))
    assert staged == worker_files() == sorted(str(p.relative_to(WORKER_PACKAGE)) for p in WORKER_PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    probe = subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "import gym.worker.__main__, sys; others = [m for m in sys.modules if m.startswith('gym') and m not in ('gym',) and not m.startswith('gym.worker')]; assert not others, others; print(gym.worker.__main__.__file__)",
        ],
        env={"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip().startswith(str(lib))


def test_missing_bwrap_stops_grading_with_how_to_install(monkeypatch, vector_add) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        get_sandbox("bwrap")
    result = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="bwrap", timing_reps=0))
    assert result.status == Status.infra_error
    assert "apt-get install bubblewrap" in (result.error or "")


def test_process_backend_warns_and_is_never_a_fallback(monkeypatch, capsys, vector_add) -> None:
    monkeypatch.setattr(sandbox_base, "_WARNED", set())
    get_sandbox("process")
    assert "does not isolate" in capsys.readouterr().err
    monkeypatch.setenv("PATH", "/nonexistent")
    result = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="bwrap", timing_reps=0))
    assert result.environment.sandbox == "bwrap" and result.status == Status.infra_error


def test_registry_names_three_backends() -> None:
    assert {"bwrap", "docker", "process"} <= set(available_sandboxes())
    assert not available_sandboxes()["process"].isolated
    assert available_sandboxes()["bwrap"].isolated and available_sandboxes()["docker"].isolated
