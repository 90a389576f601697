"""KernelBench's submission format inside the worker: `class ModelNew(nn.Module)`.

For a task imported from KernelBench the worker accepts, besides `kernel(...)`,
a file defining `class ModelNew(nn.Module)` with the reference Model's
constructor. A call's arguments are the forward inputs followed by the Model's
state (parameters and buffers); the worker builds `ModelNew(*init_inputs)` once
per distinct constructor arguments (untimed), copies the call's state into it by
state_dict name before each call (untimed), and times `model(*forward_inputs)`
alone, with autograd off (as KernelBench does).

A ModelNew whose state_dict lacks one of the reference's names, or holds it
with another shape, is refused when the first model is built (`StateMismatch`,
a compile error naming them); extra parameters of its own are its business.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
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


def _state_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's parameters and buffers by state_dict name, as the live tensors (no copies)."""
    return dict(model.state_dict(keep_vars=True))


def check_state(model: torch.nn.Module, expected: dict[str, tuple[list[int], str]]) -> None:
    """StateMismatch naming every reference state name ModelNew lacks or holds with another shape or dtype."""
    own = _state_tensors(model)
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
    """Builds ModelNew models per constructor arguments and makes each call's callable."""

    def __init__(self, module: ModuleType, forward_count: int, state_keys: list[str], device: torch.device) -> None:
        cls = getattr(module, CLASS_NAME, None)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            raise AttributeError(f"the submission defines neither `kernel(...)` nor `class {CLASS_NAME}(nn.Module)`")
        self.cls = cls
        self.forward_count = forward_count
        self.state_keys = state_keys
        self.device = device
        self.models: dict[str, torch.nn.Module] = {}

    def model_for(self, init_json: str, expected: dict[str, tuple[list[int], str]]) -> torch.nn.Module:
        """The ModelNew built for these constructor arguments (built, moved and checked once)."""
        model = self.models.get(init_json)
        if model is None:
            with torch.no_grad():
                model = self.cls(*decode_init_inputs(init_json))
                if not isinstance(model, torch.nn.Module):
                    raise TypeError(f"{CLASS_NAME}(...) did not build an nn.Module")
                model = model.to(self.device)
            check_state(model, expected)
            self.models[init_json] = model
        return model

    def prepare(self, init_json: str, given: list[Any]) -> Callable[[], Any]:
        """Copy the call's state into its model (untimed) and return the call to time."""
        forward_args = given[: self.forward_count]
        state = dict(zip(self.state_keys, given[self.forward_count :]))
        expected = {key: (list(value.shape), str(value.dtype).removeprefix("torch.")) for key, value in state.items()}
        model = self.model_for(init_json, expected)
        own = _state_tensors(model)
        with torch.no_grad():
            for key, value in state.items():
                own[key].copy_(value)

        def call() -> Any:
            with torch.no_grad():
                return model(*forward_args)

        return call
