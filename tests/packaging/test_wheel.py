"""A wheel built with `python -m build`, installed into a fresh venv outside the checkout, works.

The module builds the sdist and, from it, the wheel (what `python -m build` does, so MANIFEST.in and
setup.py's package data are both checked) from a copy of the checkout, installs the wheel with
`--no-deps` into a venv in a temporary folder, and runs `kgym list`, `kgym show`, `kgym grade` of a
shipped solution in the default sandbox (bwrap), `kgym run` and `kgym leaderboard build` there, from
a folder outside the checkout with no KGYM_ROOT: the tasks, references and leaderboard assets must
come from the wheel's package data (`gym/_shipped`). Where bwrap cannot run, the two grading tests
skip (fail where KGYM_REQUIRE_SANDBOXES names bwrap) and the leaderboard is still built from the
synthetic run folders the site tests use.

The dependencies (torch, triton, jinja2, ...) are not installed again: a `.pth` file in the temp
venv adds this interpreter's site-packages as a plain path entry. The .pth files in that folder are
not processed, so the editable install's finder for the checkout never loads; the test asserts
that `gym` resolves to the temp venv's copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gym.sandbox import available_sandboxes
from tests.support.integrations import needs
from tests.support.run_folders import standard_runs
from tests.support.warm_bwrap import REQUIRED as REQUIRED_SANDBOXES

needs("build")
# `--no-isolation` builds with this interpreter's setuptools (no index needed).
needs("setuptools")

CHECKOUT = Path(__file__).resolve().parents[2]
# What the build reads from the checkout (the sdist step then keeps what MANIFEST.in and setuptools select).
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "kernel_gym.py", "gym", "tasks", "references", "leaderboard", "sandbox")
# The checkout's folders the wheel carries under gym/_shipped/.
SHIPPED = ("tasks", "references", "leaderboard", "sandbox")
# Variables that would point the installed gym back at the checkout or at other task roots.
SCRUBBED = ("KGYM_ROOT", "KGYM_TASKS", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSAFEPATH")
TIMEOUT_S = 240


@dataclass
class WheelVenv:
    wheel: Path
    venv: Path
    python: Path
    kgym: Path
    # A folder outside the checkout, the commands' cwd.
    work: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.kgym), *args], cwd=self.work, env=self.env, capture_output=True, text=True, timeout=timeout)


def _run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, f"{command} exited {result.returncode}\nstdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}"
    return result


def _copy_checkout(target: Path) -> None:
    for name in BUILD_INPUTS:
        source = CHECKOUT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(source, target / name)


def _sandbox_uid_base() -> str:
    """A sandbox uid range of this test's own (apart from the sandbox tests' ranges)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return str(int(os.environ.get("KGYM_TEST_UID_BASE", "62000")) + 9000 + 100 * int(worker or 0))


def _environment(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED}
    env["HOME"] = str(home)
    env.pop("XDG_DATA_HOME", None)
    env.pop("XDG_CACHE_HOME", None)
    env["KGYM_SANDBOX_UID"] = _sandbox_uid_base()
    if os.geteuid() != 0 and "KGYM_SANDBOX_PYTHON" not in env:
        # As an ordinary user the worker runs the grading process's own interpreter, here the temp
        # venv's, whose dependencies come through the .pth from a folder bwrap does not bind: let it
        # run this interpreter instead (it imports only the staged worker, never the checkout's gym).
        env["KGYM_SANDBOX_PYTHON"] = sys.executable
    return env


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WheelVenv]:
    root = tmp_path_factory.mktemp("wheel")
    assert not root.resolve().is_relative_to(CHECKOUT), f"{root} is inside the checkout"
    source, dist, venv, work, home = (root / name for name in ("src", "dist", "venv", "work", "home"))
    for folder in (source, work, home):
        folder.mkdir()
    _copy_checkout(source)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)], cwd=root)
    (wheel,) = dist.glob("kernel_gym-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--no-compile", "--disable-pip-version-check", "--quiet"]
    _run([*pip, str(wheel)])
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "zz-kgym-test-dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    yield WheelVenv(wheel=wheel, venv=venv, python=python, kgym=venv / "bin" / "kgym", work=work, env=_environment(home))


@pytest.fixture
def bwrap(wheel_venv: WheelVenv, monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip (fail where KGYM_REQUIRE_SANDBOXES names bwrap) when the default sandbox cannot run here."""
    for key in ("KGYM_SANDBOX_UID", "KGYM_SANDBOX_PYTHON"):
        if key in wheel_venv.env:
            monkeypatch.setenv(key, wheel_venv.env[key])
    problem = available_sandboxes()["bwrap"].check()
    if problem:
        if "bwrap" in REQUIRED_SANDBOXES:
            pytest.fail(f"bwrap is required here but unavailable: {problem}")
        pytest.skip(f"bwrap unavailable: {problem}")


def _assert_site(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "leaderboard.json").is_file()
    assert (site / "tasks" / "l1" / "vector_add.html").is_file()
    for name in (CHECKOUT / "leaderboard" / "static").iterdir():
        assert (site / "static" / name.name).read_bytes() == name.read_bytes(), name.name


def test_wheel_carries_the_shipped_folders(wheel_venv: WheelVenv) -> None:
    with zipfile.ZipFile(wheel_venv.wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/", 1)[0] for name in names}
    dist_info = "-".join(wheel_venv.wheel.name.split("-")[:2]) + ".dist-info"
    assert tops == {"gym", "kernel_gym.py", dist_info}, tops  # kernel_gym: the verifiers environment id
    shipped = {name.split("/")[2] for name in names if name.startswith("gym/_shipped/")}
    assert shipped == set(SHIPPED)
    for relative in (
        "tasks/l1/vector_add/task.toml",
        "tasks/l1/vector_add/solution.py",
        "references/vector_add.py",
        "leaderboard/templates/index.html",
        "sandbox/build_runtime.sh",
    ):
        assert f"gym/_shipped/{relative}" in names, relative
    for name in (CHECKOUT / "leaderboard" / "static").iterdir():
        assert f"gym/_shipped/leaderboard/static/{name.name}" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_gym_imports_from_the_wheel_not_the_checkout(wheel_venv: WheelVenv) -> None:
    probe = "import json, gym, gym.tasks.paths as p; print(json.dumps([gym.__file__, str(p.shipped_root()), p.checkout_root() is None]))"
    result = _run([str(wheel_venv.python), "-c", probe], cwd=wheel_venv.work, env=wheel_venv.env)
    location, shipped, no_checkout = json.loads(result.stdout)
    site_packages = wheel_venv.venv.resolve()
    assert Path(location).resolve().is_relative_to(site_packages), location
    assert Path(shipped) == Path(location).resolve().parent / "_shipped"
    assert no_checkout


def test_list_and_show(wheel_venv: WheelVenv) -> None:
    listed = wheel_venv.run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    ids = {entry["id"] for entry in json.loads(listed.stdout)}
    expected = {"/".join(path.parent.relative_to(CHECKOUT / "tasks").parts) for path in (CHECKOUT / "tasks").rglob("task.toml")}
    assert ids == expected
    assert not listed.stderr.strip(), listed.stderr
    shown = wheel_venv.run("show", "l1/vector_add")
    assert shown.returncode == 0, shown.stderr
    assert "l1/vector_add" in shown.stdout
    # The reference source comes from the wheel's references/vector_add.py.
    assert "def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:" in shown.stdout


@pytest.mark.usefixtures("bwrap")
def test_grade_a_shipped_solution(wheel_venv: WheelVenv) -> None:
    submission = wheel_venv.work / "vector_add_solution.py"
    shutil.copyfile(CHECKOUT / "tasks" / "l1" / "vector_add" / "solution.py", submission)
    graded = wheel_venv.run("grade", "l1/vector_add", submission.name, "--json")
    assert graded.returncode == 0, f"stdout:\n{graded.stdout[-4000:]}\nstderr:\n{graded.stderr[-4000:]}"
    result = json.loads(graded.stdout)
    assert result["status"] == "passed", result
    assert result["task_id"] == "l1/vector_add"
    assert result["environment"]["sandbox"] == "bwrap"


@pytest.mark.usefixtures("bwrap")
def test_run_and_leaderboard_build(wheel_venv: WheelVenv) -> None:
    run_dir, site = wheel_venv.work / "run", wheel_venv.work / "site"
    ran = wheel_venv.run("run", "--agent", "solutions", "--suite", "l1", "--task", "l1/vector_add", "--attempts", "1", "--out", str(run_dir))
    assert ran.returncode == 0, f"stdout:\n{ran.stdout[-4000:]}\nstderr:\n{ran.stderr[-4000:]}"
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    assert [(line["task_id"], line["status"]) for line in lines] == [("l1/vector_add", "passed")]
    built = wheel_venv.run("leaderboard", "build", str(run_dir), "--out", str(site))
    assert built.returncode == 0, f"stdout:\n{built.stdout[-4000:]}\nstderr:\n{built.stderr[-4000:]}"
    _assert_site(site)


def test_leaderboard_build_of_fixture_runs(wheel_venv: WheelVenv) -> None:
    runs = standard_runs(wheel_venv.work / "fixture-runs")
    site = wheel_venv.work / "fixture-site"
    built = wheel_venv.run("leaderboard", "build", *map(str, runs), "--out", str(site))
    assert built.returncode == 0, f"stdout:\n{built.stdout[-4000:]}\nstderr:\n{built.stderr[-4000:]}"
    _assert_site(site)
    # A task page shows the task's prompt, read from the wheel's tasks/.
    assert "l1/softmax" in (site / "tasks" / "l1" / "softmax.html").read_text()
