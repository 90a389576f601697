"""The layer order of gym.layers holds for every import in every module of the gym, at module level
and inside functions (only `if TYPE_CHECKING:` blocks are left out), with no exceptions list."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gym
from gym.layers import LAYERS, ROOT_LAYER, rank

PACKAGE = Path(gym.__file__).resolve().parent


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def component(module: str) -> str:
    """The layer name of a gym module: its first component under gym (the package itself: ROOT_LAYER)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT_LAYER


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def gym_imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str, bool]]:
    """(line, imported gym module, inside a function) for every import of the gym in `path` (a module of the
    package at `root`), outside TYPE_CHECKING blocks."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit_one(other, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, ast.Import):
            found.extend((child.lineno, alias.name, in_function) for alias in child.names if alias.name.split(".")[0] == "gym")
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = package.split(".")[: len(package.split(".")) - child.level + 1]
                target = ".".join(base + ([child.module] if child.module else []))
            else:
                target = child.module or ""
            if target.split(".")[0] == "gym":
                # `from gym import tasks` imports gym.tasks: name each imported submodule-or-name under its target.
                targets = [target] if target != "gym" else [f"gym.{alias.name}" for alias in child.names]
                found.extend((child.lineno, each, in_function) for each in targets)
        else:
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text(), filename=str(path)), False)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_of_the_gym_has_a_layer() -> None:
    components = {component(module_name(path)) for path in MODULES}
    listed = {name for peers in LAYERS for name in peers}
    assert components <= listed, f"not in gym.layers.LAYERS: {sorted(components - listed)}"
    assert len(MODULES) > 100


@pytest.mark.parametrize("path", MODULES, ids=lambda path: module_name(path))
def test_no_module_imports_a_higher_layer_or_a_peer(path: Path) -> None:
    own = component(module_name(path))
    problems = []
    for line, target, in_function in gym_imports(path):
        other = component(target)
        if other == own:
            continue
        if rank(other) >= rank(own):
            where = "inside a function" if in_function else "at module level"
            problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: gym.{own} imports {target} {where} (gym.{other} is not below gym.{own})")
    assert not problems, "\n".join(problems)


def test_the_check_sees_imports_inside_functions_and_leaves_out_type_checking(tmp_path: Path) -> None:
    """The walker on a file of its own: a function-level import counts, a TYPE_CHECKING one does not."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from gym.tasks.model import Task\n"
        "if TYPE_CHECKING:\n    from gym.harness.env import Env\n"
        "def f():\n    from gym.grading.grader import grade\n    return grade\n"
        "from . import base\n"
    )
    fake = tmp_path / "gym" / "sandbox" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    assert gym_imports(fake, tmp_path / "gym") == [(2, "gym.tasks.model", False), (6, "gym.grading.grader", True), (8, "gym.sandbox", False)]
