"""Optional extras: the core install runs the grader and the CLI; a command that
needs a missing extra ends in one line naming it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gym.errors import KernelGymError, MissingExtra
from gym.extras import EXTRAS, require

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_EXTRAS = ROOT / "tests" / "support" / "without_extras.py"


def kgym_without_extras(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(WITHOUT_EXTRAS), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower() for requirement in requirements}  # type: ignore[union-attr]


def test_extras_match_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        if extra in FRAMEWORKS:
            # An RL framework's extra names its distribution (its import name differs: openenv-core -> openenv.core).
            assert FRAMEWORKS[extra] in requirement_names(optional[extra]), extra
            continue
        assert requirement_names(optional[extra]) == set(modules), extra
        assert not set(modules) & requirement_names(project["dependencies"]), extra
    dev = " ".join(optional["dev"])
    assert all(extra in dev for extra in EXTRAS if extra not in FRAMEWORKS), "dev pulls every extra but the RL frameworks"
    integrations = " ".join(optional["integrations"])
    assert "dev" in integrations and all(extra in integrations for extra in FRAMEWORKS), "integrations pulls dev and every framework"


# The RL frameworks' extras (their own venv, `make test-integrations`) -> the distribution each installs.
FRAMEWORKS = {"openenv": "openenv-core", "verifiers": "verifiers", "verl": "verl", "skyrl": "skyrl-gym"}


def test_require_names_the_extra() -> None:
    require("server", "kgym serve", "json")  # present: nothing happens
    with pytest.raises(MissingExtra) as missing:
        require("server", "kgym serve", "no_such_module_kgym")
    assert str(missing.value) == "kgym serve needs the 'server' extra: pip install 'kernel-gym[server]'"
    assert isinstance(missing.value, KernelGymError) and missing.value.module == "no_such_module_kgym"
    with pytest.raises(ValueError):
        require("nope", "anything")


@pytest.mark.parametrize(
    "args",
    [("list",), ("show", "l1/vector_add"), ("doctor", "--quick")],
    ids=lambda args: " ".join(args),
)
def test_core_commands_run_without_extras(args: tuple[str, ...]) -> None:
    result = kgym_without_extras(*args)
    assert "Traceback" not in result.stderr, result.stderr
    if args[0] == "doctor":
        # Exit 1 only when the default sandbox is unusable here; the docker row names its extra.
        assert result.returncode in (0, 1) and "kgym doctor" in result.stdout, result.stderr
        assert "'docker'" in result.stdout and "kernel-gym[docker]" in result.stdout, result.stdout
    else:
        assert result.returncode == 0, result.stderr
        assert "vector_add" in result.stdout


def test_grade_runs_without_extras() -> None:
    solution = ROOT / "tasks" / "l1" / "vector_add" / "solution.py"
    result = kgym_without_extras("grade", "l1/vector_add", str(solution), "--json")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert '"status": "passed"' in result.stdout


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("serve",), "kgym serve needs the 'server' extra: pip install 'kernel-gym[server]'"),
        (("mcp",), "kgym mcp needs the 'server' extra: pip install 'kernel-gym[server]'"),
        (("leaderboard", "build", "runs/none"), "kgym leaderboard build needs the 'site' extra: pip install 'kernel-gym[site]'"),
        (
            ("run", "--agent", "openai", "--model", "m", "--task", "l1/vector_add", "--out", "{tmp}/run"),
            "the openai agent needs the 'agents' extra: pip install 'kernel-gym[agents]'",
        ),
    ],
    ids=["serve", "mcp", "leaderboard", "openai agent"],
)
def test_commands_needing_an_extra_name_it(args: tuple[str, ...], line: str, tmp_path: Path) -> None:
    result = kgym_without_extras(*(arg.replace("{tmp}", str(tmp_path)) for arg in args))
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.strip() == line
