"""Load reference ops, input generators and oracles from `references/` by path."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gym.task_model import Task


class ReferenceError_(Exception):
    """A task's "module:function" could not be resolved."""


@functools.cache
def load_module(references_dir: Path, module: str) -> ModuleType:
    path = references_dir / f"{module}.py"
    if not path.is_file():
        raise ReferenceError_(f"{path}: no such reference module")
    name = f"kgym_references.{module}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferenceError_(f"{path}: cannot be imported")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except Exception as error:
        del sys.modules[name]
        raise ReferenceError_(f"{path}: import failed: {type(error).__name__}: {error}") from error
    return loaded


def resolve(references_dir: Path, target: str) -> Callable[..., Any]:
    """The function named by "module:function"."""
    module_name, function_name = target.split(":", 1)
    module = load_module(references_dir, module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ReferenceError_(f"{references_dir / (module_name + '.py')}: defines no function {function_name!r}")
    return function


def reference_fn(task: Task) -> Callable[..., Any]:
    """The reference with the task's options bound."""
    return functools.partial(resolve(task.references_dir, task.spec.reference), **task.spec.options)


def inputs_fn(task: Task) -> Callable[..., dict[str, Any]]:
    return functools.partial(resolve(task.references_dir, task.spec.inputs), **task.spec.options)


def oracle_fn(task: Task) -> Callable[..., Any] | None:
    if task.spec.oracle is None:
        return None
    return functools.partial(resolve(task.references_dir, task.spec.oracle), **task.spec.options)


def reference_source(task: Task) -> str:
    """Source of the reference function (and its module docstring), as the agent sees it."""
    target = task.spec.reference
    module_name, _ = target.split(":", 1)
    module = load_module(task.references_dir, module_name)
    function = resolve(task.references_dir, target)
    header = f'"""{inspect.getdoc(module)}"""\n\n' if inspect.getdoc(module) else ""
    return header + inspect.getsource(function)
