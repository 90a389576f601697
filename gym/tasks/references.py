"""Reference ops, input generators and oracles: loaded from `references/` by path,
and called the way the grader calls them (arguments by parameter name, outputs
as a list of tensors, the float64 oracle)."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from gym.errors import ReferenceLoadError
from gym.tasks.kernelbench import runtime as kernelbench
from gym.tasks.model import Shape, Task


@functools.cache
def load_module(references_dir: Path, module: str) -> ModuleType:
    path = references_dir / f"{module}.py"
    if not path.is_file():
        raise ReferenceLoadError(f"{path}: no such reference module")
    name = f"kgym_references.{module}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferenceLoadError(f"{path}: cannot be imported")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except Exception as error:
        del sys.modules[name]
        raise ReferenceLoadError(f"{path}: import failed: {type(error).__name__}: {error}") from error
    return loaded


def resolve(references_dir: Path, target: str) -> Callable[..., Any]:
    """The function named by "module:function"."""
    module_name, function_name = target.split(":", 1)
    module = load_module(references_dir, module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ReferenceLoadError(f"{references_dir / (module_name + '.py')}: defines no function {function_name!r}")
    return function


def reference_fn(task: Task, shape: Shape) -> Callable[..., Any]:
    """The reference at `shape` with the task's options bound (our tasks ignore the shape; an
    imported KernelBench Model is built for it)."""
    if task.spec.kernelbench is not None:
        return kernelbench.reference(task, shape)
    assert task.spec.reference is not None
    return functools.partial(resolve(task.references_dir, task.spec.reference), **task.spec.options)


def inputs_fn(task: Task) -> Callable[..., dict[str, Any]]:
    if task.spec.kernelbench is not None:
        return functools.partial(kernelbench.make_inputs, task)
    assert task.spec.inputs is not None
    return functools.partial(resolve(task.references_dir, task.spec.inputs), **task.spec.options)


def oracle_fn(task: Task) -> Callable[..., Any] | None:
    if task.spec.oracle is None:
        return None
    return functools.partial(resolve(task.references_dir, task.spec.oracle), **task.spec.options)


def reference_source(task: Task) -> str:
    """Source of the reference function (and its module docstring), as the agent sees it;
    an imported KernelBench task's whole problem file."""
    if task.spec.kernelbench is not None:
        return kernelbench.problem_source(task)
    target = task.spec.reference
    assert target is not None
    module_name, _ = target.split(":", 1)
    module = load_module(task.references_dir, module_name)
    function = resolve(task.references_dir, target)
    header = f'"""{inspect.getdoc(module)}"""\n\n' if inspect.getdoc(module) else ""
    return header + inspect.getsource(function)


def as_output_list(value: Any) -> tuple[list[torch.Tensor], bool]:
    """A reference's return value as a list of tensors, and whether it was a tuple."""
    if isinstance(value, torch.Tensor):
        return [value], False
    if isinstance(value, tuple) and all(isinstance(item, torch.Tensor) for item in value):
        return list(value), True
    raise TypeError(f"a reference must return a tensor or a tuple of tensors, not {type(value).__name__}")


def clone_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments by name, tensors cloned (every call gets inputs of its own)."""
    return {name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in args.items()}


def float64_args(args: dict[str, Any]) -> dict[str, Any]:
    """Clones of `args` with floating tensors upcast to float64 (what the oracle and the stages run on)."""
    return {
        name: value.to(torch.float64) if isinstance(value, torch.Tensor) and value.dtype.is_floating_point else value
        for name, value in clone_args(args).items()
    }


def call_args(args: dict[str, Any], params: list[str]) -> list[Any]:
    """Arguments by name, as the positional list the kernel and the reference take."""
    return [args[name] for name in params]


def reference_outputs(task: Task, inputs: dict[str, Any], shape: Shape) -> tuple[list[torch.Tensor], bool]:
    """The reference's outputs on clones of `inputs` (detached), and whether it returns a tuple."""
    outputs, returns_tuple = as_output_list(reference_fn(task, shape)(*call_args(clone_args(inputs), task.spec.params)))
    return [output.detach() for output in outputs], returns_tuple


def oracle_outputs(task: Task, inputs: dict[str, Any], shape: Shape) -> list[torch.Tensor]:
    """Float64 oracle outputs: the task's oracle, or the reference run on float64 inputs."""
    oracle = oracle_fn(task) or reference_fn(task, shape)
    upcast = float64_args(inputs)
    outputs, _ = as_output_list(oracle(*call_args(upcast, task.spec.params)))
    return outputs


def stage_outputs(task: Task, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The task's named stages in float64 on clones of `inputs` (floating inputs upcast, as for the oracle),
    in `stage_names` order; ReferenceLoadError when the stage function does not answer the declared names."""
    assert task.spec.stages is not None
    function = resolve(task.references_dir, task.spec.stages)
    if task.spec.options:
        function = functools.partial(function, **task.spec.options)
    upcast = float64_args(inputs)
    answered = function(*call_args(upcast, task.spec.params))
    if not isinstance(answered, dict) or list(answered) != task.spec.stage_names:
        got = list(answered) if isinstance(answered, dict) else type(answered).__name__
        raise ReferenceLoadError(f"{task.spec.stages}: must return {{name: tensor}} for stage_names {task.spec.stage_names}, got {got}")
    if not all(isinstance(value, torch.Tensor) for value in answered.values()):
        raise ReferenceLoadError(f"{task.spec.stages}: every stage must be a tensor")
    return {name: value.detach() for name, value in answered.items()}
