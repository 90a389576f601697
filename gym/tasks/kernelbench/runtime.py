"""An imported KernelBench task at run time (trusted side): its seeded inputs and weights, its
reference, and what the worker needs to build a `ModelNew`.

Inputs and weights: the trial's generator draws one seed; under it (a forked RNG,
so nothing else's randomness moves) the problem's own `get_init_inputs()`,
`Model(*init_inputs)` and `get_inputs()` run at the task's shape, on the grade's
device. The kernel's arguments are the forward inputs followed by the Model's
state_dict (parameters and buffers), floating ones in the trial's dtype. Same
(task version, seed, device): same bits.

The reference is the Model's forward run by `torch.func.functional_call` with
the call's state in place of its own (a Model built once per shape), autograd
off, in the Model's default mode (training, as KernelBench runs it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from gym.errors import ProblemError
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate
from gym.tasks.model import KernelBenchSource, Shape, Task
from gym.worker.protocol import ModuleForm


def source_of(task: Task) -> KernelBenchSource:
    if task.spec.kernelbench is None:
        raise ProblemError(f"{task.id} is not a KernelBench task")
    return task.spec.kernelbench


def problem_source(task: Task) -> str:
    return (task.folder / source_of(task).problem_file).read_text(encoding="utf-8")


def problem_at(task: Task, shape: Shape) -> ModuleType:
    """The problem's module run with the shape's sizes."""
    return instantiate(problem_source(task), dict(shape), f"{task.id} {dict(shape)}")


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"tuple": [_encode(item) for item in value]}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ProblemError(f"a constructor argument of type {type(value).__name__} cannot be passed to ModelNew")


def init_json(task: Task, shape: Shape) -> str:
    """ModelNew's constructor arguments at `shape`, as the worker receives them."""
    return json.dumps(_encode(init_inputs(problem_at(task, shape))))


def module_form(task: Task) -> ModuleForm | None:
    """What the worker needs to accept `class ModelNew` for this task (None for our own tasks)."""
    source = task.spec.kernelbench
    if source is None:
        return None
    return ModuleForm(forward_count=len(source.forward_inputs), state_keys=[source.state[name] for name in state_params(task)])


def state_params(task: Task) -> list[str]:
    """The kernel parameters that carry the Model's state, in order."""
    forward = set(source_of(task).forward_inputs)
    return [name for name in task.spec.params if name not in forward]


def _seed_from(generator: torch.Generator) -> int:
    return int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device).item())


def _seeded(device: torch.device) -> Any:
    return torch.random.fork_rng(devices=[device] if device.type == "cuda" else [], device_type=device.type)


def build(task: Task, shape: Shape, seed: int, device: torch.device) -> tuple[torch.nn.Module, list[Any]]:
    """The Model and the forward inputs under `seed`, on `device` (raw: as the problem makes them)."""
    module = problem_at(task, shape)
    with _seeded(device), torch.device(device):
        torch.manual_seed(seed)
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
    return model.to(device), inputs


def _as_arg(value: Any, dtype: torch.dtype, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.dtype.is_floating_point:
            value = value.to(dtype)
        return value.to(device).contiguous()
    return value


def make_inputs(task: Task, shape: Shape, dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    """The kernel's arguments by name: forward inputs, then the Model's state."""
    source = source_of(task)
    model, inputs = build(task, shape, _seed_from(generator), device)
    if len(inputs) != len(source.forward_inputs):
        raise ProblemError(f"get_inputs() returned {len(inputs)} values, Model.forward takes {len(source.forward_inputs)}")
    state = model.state_dict()
    values: dict[str, Any] = {name: _as_arg(value, dtype, device) for name, value in zip(source.forward_inputs, inputs)}
    for name in state_params(task):
        values[name] = _as_arg(state[source.state[name]], dtype, device)
    return values


_STRUCTURES: dict[tuple[Path, str, tuple[tuple[str, int], ...], str, torch.dtype], torch.nn.Module] = {}


def _structure(task: Task, shape: Shape, device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    """A Model at `shape` whose state each call replaces (built once per shape, device and float
    dtype: the float64 oracle runs a float64 copy, so tensors the Model keeps are float64 too)."""
    key = (task.folder, source_of(task).sha256, tuple(sorted(shape.items())), str(device), dtype)
    model = _STRUCTURES.get(key)
    if model is None:
        model, _ = build(task, shape, 0, device)
        if dtype != torch.float32:
            model = model.to(dtype)
        _STRUCTURES[key] = model
    return model


def reference(task: Task, shape: Shape) -> Callable[..., Any]:
    """The reference at `shape`: called with the kernel's arguments, in order."""
    source = source_of(task)
    forward_count = len(source.forward_inputs)
    keys = [source.state[name] for name in state_params(task)]

    def call(*args: Any) -> Any:
        tensors = [arg for arg in args if isinstance(arg, torch.Tensor)]
        device = tensors[0].device if tensors else torch.device("cpu")
        dtype = torch.float64 if any(t.dtype == torch.float64 for t in tensors) else torch.float32
        model = _structure(task, shape, device, dtype)
        with torch.no_grad():
            return torch.func.functional_call(model, dict(zip(keys, args[forward_count:])), tuple(args[:forward_count]), strict=False)

    call.__name__ = f"kernelbench_reference_{task.id.replace('/', '_')}"
    return call
