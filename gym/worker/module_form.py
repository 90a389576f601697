"""KernelBench's submission format inside the worker: `class ModelNew(nn.Module)`.

For a task imported from KernelBench the worker accepts, besides `kernel(...)`,
a file defining `class ModelNew(nn.Module)` with the reference Model's
constructor. A call's arguments are the forward inputs followed by the Model's
state (parameters and buffers); the worker builds `ModelNew(*init_inputs)` once
per distinct constructor arguments (untimed), copies the call's state into it by
state_dict name before each call (untimed), and times `model(*forward_inputs)`
alone, with autograd off (as KernelBench does).

A ModelNew whose state lacks one of the reference's names, or holds it with
another shape, is refused when the first model is built (`StateMismatch`, a
compile error naming them); extra parameters of its own are its business. Every
model is built right after the import, before any call's inputs exist, and the
state is found and copied by the worker's own code (`state_tensors`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import torch

# The class a KernelBench submission defines.
CLASS_NAME = "ModelNew"


class StateMismatch(Exception):
    """ModelNew's parameters and buffers do not match the reference Model's by name and shape."""


def decode_init_inputs(text: str) -> list[Any]:
    """Constructor arguments from the request's JSON (tuples arrive as {"tuple": [...]})."""

    def revive(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"tuple"}:
            return tuple(revive(item) for item in value["tuple"])
        if isinstance(value, list):
            return [revive(item) for item in value]
        return value

    decoded = revive(json.loads(text))
    if not isinstance(decoded, list):
        raise ValueError("init_inputs must be a JSON list")
    return decoded


def state_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's parameters and persistent buffers by state_dict name, as the live tensors.

    Walked by the worker's own code over the modules' plain dicts (`_parameters`, `_buffers`,
    `_modules`), never through methods ModelNew could override (`state_dict`, `named_parameters`,
    `__getattr__`); every tensor must be an exact `nn.Parameter` or `torch.Tensor` (a subclass's
    methods would run when the worker copies a call's state in)."""
    found: dict[str, torch.Tensor] = {}
    pending: list[tuple[str, Any]] = [("", model)]
    seen: set[int] = set()
    while pending:
        prefix, module = pending.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        attributes = object.__getattribute__(module, "__dict__")
        if type(attributes) is not dict:
            raise StateMismatch(f"ModelNew's module {prefix or 'itself'} has no plain attribute dict")
        parameters, buffers, children = attributes.get("_parameters"), attributes.get("_buffers"), attributes.get("_modules")
        skipped = attributes.get("_non_persistent_buffers_set", set())
        if type(parameters) is not dict or type(buffers) is not dict or type(children) is not dict or type(skipped) is not set:
            raise StateMismatch(f"ModelNew's module {prefix or 'itself'} replaced nn.Module's own state dicts")
        for name, value in dict.items(parameters):
            if value is None:
                continue
            if type(value) is not torch.nn.Parameter:
                raise StateMismatch(f"ModelNew's parameter {prefix}{name} is a {type(value).__qualname__}, not a plain nn.Parameter")
            found[prefix + name] = value
        for name, value in dict.items(buffers):
            if value is None or name in skipped:
                continue
            if type(value) is not torch.Tensor:
                raise StateMismatch(f"ModelNew's buffer {prefix}{name} is a {type(value).__qualname__}, not a plain torch.Tensor")
            found[prefix + name] = value
        for name, child in dict.items(children):
            if child is not None:
                pending.append((f"{prefix}{name}.", child))
    return found


def check_state(model: torch.nn.Module, expected: dict[str, tuple[list[int], str]]) -> None:
    """StateMismatch naming every reference state name ModelNew lacks or holds with another shape or dtype."""
    own = state_tensors(model)
    missing = sorted(name for name in expected if name not in own)
    wrong = sorted(
        f"{name} is {list(own[name].shape)} {str(own[name].dtype).removeprefix('torch.')}, the reference's is {shape} {dtype}"
        for name, (shape, dtype) in expected.items()
        if name in own and (list(own[name].shape) != shape or str(own[name].dtype).removeprefix("torch.") != dtype)
    )
    if missing or wrong:
        parts = []
        if missing:
            parts.append("ModelNew has no parameter or buffer named " + ", ".join(missing))
        if wrong:
            parts.append("; ".join(wrong))
        known = ", ".join(sorted(own)) or "none"
        raise StateMismatch("the reference Model's state is loaded into ModelNew by state_dict name: " + "; ".join(parts) + f" (ModelNew's names: {known})")


class ModuleEntry:
    """Builds ModelNew models per constructor arguments (all of them right after the import, before
    any call's inputs exist) and makes each call's callable."""

    def __init__(self, namespace: dict[str, Any], forward_count: int, state_keys: list[str], device: torch.device) -> None:
        cls = namespace.get(CLASS_NAME)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            raise AttributeError(f"the submission defines neither `kernel(...)` nor `class {CLASS_NAME}(nn.Module)`")
        self.cls = cls
        self.forward_count = forward_count
        self.state_keys = state_keys
        self.device = device
        self.models: dict[str, torch.nn.Module] = {}

    def build(self, init_json: str) -> torch.nn.Module:
        """The ModelNew for these constructor arguments (built and moved once)."""
        model = self.models.get(init_json)
        if model is None:
            with torch.no_grad():
                model = self.cls(*decode_init_inputs(init_json))
                if not isinstance(model, torch.nn.Module):
                    raise TypeError(f"{CLASS_NAME}(...) did not build an nn.Module")
                model = model.to(self.device)
            self.models[init_json] = model
        return model

    def check_first(self, call: Any) -> None:
        """Check the state names of the model of `call` (a CallRequest) against the shapes the request describes."""
        # The call's argument names are file-safe ("linear_weight"); the state's own names are the state keys.
        state_args = call.args[self.forward_count :]
        expected = {key: (list(arg.tensor.shape), arg.tensor.dtype) for key, arg in zip(self.state_keys, state_args) if arg.tensor is not None}
        check_state(self.build(call.init_inputs or "[]"), expected)

    def prepare(self, init_json: str, given: list[Any], names: list[str]) -> tuple[Callable[[], Any], list[tuple[str, torch.Tensor]]]:
        """Copy the call's state into its model (untimed, by the worker's own code) and return the call
        to time, with the tensors holding the call's inputs by name (forward inputs, then the state)."""
        forward_args = given[: self.forward_count]
        state = dict(zip(self.state_keys, given[self.forward_count :]))
        model = self.models.get(init_json)
        if model is None:
            raise StateMismatch("no ModelNew was built for this call's constructor arguments")
        own = state_tensors(model)
        missing = sorted(key for key in state if key not in own)
        if missing:
            raise StateMismatch("ModelNew no longer has " + ", ".join(missing))
        with torch.no_grad():
            for key, value in state.items():
                torch.Tensor.copy_(own[key], value)
        inputs = [(name, value) for name, value in zip(names, forward_args) if type(value) is torch.Tensor]
        # By the call's parameter names (what the replay's fresh inputs are named by), held in the model's own tensors.
        inputs += [(name, own[key]) for name, key in zip(names[self.forward_count :], self.state_keys)]

        def call() -> Any:
            with torch.no_grad():
                return model(*forward_args)

        return call, inputs
