"""KernelBench's ModelNew inside the worker: constructor arguments decoded with their tuples, the
reference's state loaded by name before each call, mismatches named."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
from torch import nn

from gym.worker.module_form import ModuleEntry, StateMismatch, decode_init_inputs, state_tensors
from gym.worker.protocol import Arg, CallRequest, TensorFile


def test_init_inputs_keep_their_tuples() -> None:
    assert decode_init_inputs(json.dumps([3, {"tuple": [16, 1, 1]}, [1, {"tuple": [2]}], 0.5, None])) == [3, (16, 1, 1), [1, (2,)], 0.5, None]
    with pytest.raises(ValueError, match="JSON list"):
        decode_init_inputs("{}")


def _submission(cls: type) -> dict[str, Any]:
    """A submission's namespace holding `cls` as ModelNew."""
    return {"ModelNew": cls}


def _call(init: str, state: dict[str, tuple[list[int], str]]) -> CallRequest:
    args = [Arg(name="x", tensor=TensorFile(file="x.bin", dtype="float32", shape=[2, 3], nbytes=24))]
    args += [
        Arg(name=name, tensor=TensorFile(file=f"{name}.bin", dtype=dtype, shape=shape, nbytes=4 * max(1, len(shape)))) for name, (shape, dtype) in state.items()
    ]
    return CallRequest(id=0, args=args, init_inputs=init)


class Linear(nn.Module):
    def __init__(self, n: int, m: int) -> None:
        super().__init__()
        self.linear = nn.Linear(n, m)
        self.alias = self.linear.weight  # held elsewhere too: the loaded values must reach it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.alias.T + self.linear.bias


def test_the_calls_state_is_copied_in_by_name_and_only_forward_runs_in_the_call() -> None:
    entry = ModuleEntry(_submission(Linear), forward_count=1, state_keys=["linear.weight", "linear.bias"], device=torch.device("cpu"))
    entry.build("[3, 4]")
    x, weight, bias = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    names = ["x", "linear.weight", "linear.bias"]
    call, inputs = entry.prepare("[3, 4]", [x, weight, bias], names)
    assert torch.allclose(call(), x @ weight.T + bias)
    # The tape's inputs: the forward input as given, the state as the model's own tensors (which now hold it).
    assert [name for name, _ in inputs] == names
    assert inputs[0][1] is x and torch.equal(inputs[1][1], weight) and inputs[1][1] is not weight
    other = torch.randn(4, 3)
    assert torch.allclose(entry.prepare("[3, 4]", [x, other, bias], names)[0](), x @ other.T + bias)
    assert len(entry.models) == 1, "one model per distinct constructor arguments"


def test_missing_names_and_wrong_shapes_are_named() -> None:
    entry = ModuleEntry(_submission(Linear), forward_count=1, state_keys=["fc.weight", "linear.bias"], device=torch.device("cpu"))
    with pytest.raises(StateMismatch, match=r"no parameter or buffer named fc\.weight.*linear\.bias is \[4\] float32, the reference's is \[5\] float32"):
        entry.check_first(_call("[3, 4]", {"fc.weight": ([4, 3], "float32"), "linear.bias": ([5], "float32")}))


def test_a_file_without_modelnew_is_refused() -> None:
    with pytest.raises(AttributeError, match="neither `kernel"):
        ModuleEntry({}, 1, [], torch.device("cpu"))


class Sneaky(nn.Module):
    """Overrides every method the worker could have used to find or load its state."""

    calls: list[str] = []

    def __init__(self, n: int, m: int) -> None:
        super().__init__()
        self.linear = nn.Linear(n, m)

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:
        Sneaky.calls.append("state_dict")
        return super().state_dict(*args, **kwargs)

    def named_parameters(self, *args: Any, **kwargs: Any) -> Any:
        Sneaky.calls.append("named_parameters")
        return super().named_parameters(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        Sneaky.calls.append("__getattr__")
        return super().__getattr__(name)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def test_the_state_is_found_and_loaded_without_running_any_method_of_modelnew() -> None:
    entry = ModuleEntry(_submission(Sneaky), forward_count=1, state_keys=["linear.weight", "linear.bias"], device=torch.device("cpu"))
    entry.build("[3, 4]")
    Sneaky.calls.clear()
    call, _ = entry.prepare("[3, 4]", [torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)], ["x", "linear.weight", "linear.bias"])
    assert Sneaky.calls == [], "loading the state ran the submission's own methods"
    call()
    assert "__getattr__" in Sneaky.calls, "the forward (inside the timed call) may run anything"


class CopyingParameter(nn.Parameter):
    """A Parameter subclass whose copy_ would run when the worker loads the state."""

    def copy_(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - must never run
        raise AssertionError("the worker called a Parameter subclass's copy_")


class SubclassedState(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = CopyingParameter(torch.zeros(3))


def test_state_of_other_than_exact_parameter_and_tensor_types_is_refused() -> None:
    with pytest.raises(StateMismatch, match="not a plain nn.Parameter"):
        state_tensors(SubclassedState())
