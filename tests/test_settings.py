"""gym.settings is the one place the gym reads KGYM_* variables: every name the code mentions is
listed there with its type, default and description, no other module reads one from os.environ,
and the accessors read the environment at each call, with empty meaning unset."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import gym
from gym import settings
from gym.errors import KernelGymError, SettingError

PACKAGE = Path(gym.__file__).resolve().parent


def test_every_kgym_name_in_the_code_is_a_setting() -> None:
    named: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        named.update(re.findall(r"\bKGYM_[A-Z0-9_]+\b", path.read_text()))
    assert {"KGYM_SERVE_TOKEN", "KGYM_TASKS", "KGYM_SANDBOX_UID"} <= named
    assert named <= set(settings.VARIABLES) | set(settings.TEST_VARIABLES)
    for variable in [*settings.VARIABLES.values(), *settings.TEST_VARIABLES.values()]:
        assert variable.description.endswith(".") and variable.default and variable.kind in ("text", "secret", "integer", "path", "paths")


def _reads_environment(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return "environ" in text or "getenv" in text


def test_no_module_but_settings_reads_a_kgym_variable_from_the_environment() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call | ast.Subscript) and _reads_environment(node) and "KGYM_" in ast.unparse(node):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
            # A name bound to a KGYM_* string and then read (os.environ.get(TOKEN_VARIABLE)) counts too.
            if (
                isinstance(node, ast.Call)
                and _reads_environment(node.func)
                and any(isinstance(arg, ast.Name) and arg.id.endswith(("VARIABLE", "_ENV")) for arg in node.args)
            ):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, "\n".join(offenders)


def test_accessors_read_at_each_call_and_empty_is_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KGYM_SANDBOX_UID", raising=False)
    assert settings.sandbox_uid_base() is None
    monkeypatch.setenv("KGYM_SANDBOX_UID", "63000")
    assert settings.sandbox_uid_base() == 63000
    monkeypatch.setenv("KGYM_SANDBOX_UID", "")
    assert settings.sandbox_uid_base() is None
    monkeypatch.setenv("KGYM_TASKS", f"{tmp_path / 'a'}{__import__('os').pathsep}{tmp_path / 'b'}")
    assert settings.extra_task_roots() == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]
    monkeypatch.setenv("KGYM_SANDBOX_RUNTIME", str(tmp_path / "rt"))
    monkeypatch.delenv("KGYM_DOCKER_PYTHON", raising=False)
    assert settings.docker_python() == f"{tmp_path / 'rt'}/bin/python"


def test_a_malformed_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_WARM_MAX", "eight")
    with pytest.raises(SettingError) as caught:
        settings.warm_max()
    assert isinstance(caught.value, KernelGymError) and caught.value.name == "KGYM_WARM_MAX" and caught.value.value == "eight"
    assert "KGYM_WARM_MAX='eight' is not a valid integer" in str(caught.value)


def test_an_unlisted_name_is_refused() -> None:
    with pytest.raises(KeyError, match="KGYM_NOT_A_SETTING"):
        settings.raw("KGYM_NOT_A_SETTING")
