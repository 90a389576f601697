"""The layer order of gym.layers holds for every import in every module of the gym, at module level,
inside functions and under `if TYPE_CHECKING:`, with no exceptions list; and the modules' import
graph (the same imports) has no cycle."""

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


def gym_imports(path: Path, root: Path = PACKAGE, type_checking: bool = True) -> list[tuple[int, str, bool]]:
    """(line, imported gym module, inside a function) for every import of the gym in `path` (a module of the
    package at `root`); `type_checking=False` leaves out the ones under `if TYPE_CHECKING:`. A
    `from package import name` names `package.name` (a submodule or a name of the package's)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
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
                targets = [f"{target}.{alias.name}" for alias in child.names]
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


def _resolved(target: str, modules: dict[str, Path]) -> str:
    """The module an imported name lives in: the longest prefix of `target` that is a module of the gym."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target


def import_cycles() -> list[list[str]]:
    """Every set of gym modules that import one another in a circle (strongly connected components of
    more than one module, Tarjan's algorithm), type-only and function-level imports included."""
    modules = {module_name(path): path for path in MODULES}
    graph = {name: {_resolved(target, modules) for _, target, _ in gym_imports(path)} - {name, ""} for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component_nodes = []
            while True:
                member = stack.pop()
                component_nodes.append(member)
                if member == node:
                    break
            if len(component_nodes) > 1:
                cycles.append(sorted(component_nodes))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return cycles


def test_the_modules_import_no_cycle() -> None:
    assert import_cycles() == []


def test_the_check_sees_imports_inside_functions_and_under_type_checking(tmp_path: Path) -> None:
    """The walker on a file of its own: a function-level import counts, a TYPE_CHECKING one too (unless left out)."""
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
    assert gym_imports(fake, tmp_path / "gym") == [
        (2, "gym.tasks.model.Task", False),
        (4, "gym.harness.env.Env", False),
        (6, "gym.grading.grader.grade", True),
        (8, "gym.sandbox.base", False),
    ]
    assert (4, "gym.harness.env.Env", False) not in gym_imports(fake, tmp_path / "gym", type_checking=False)
