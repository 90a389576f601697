"""KernelBench's ModelNew inside the worker: constructor arguments decoded with their tuples, the
reference's state loaded by name before each call, mismatches named."""

from __future__ import annotations

import json
from types import ModuleType

import pytest
import torch
from torch import nn

from gym.worker.module_form import ModuleEntry, StateMismatch, decode_init_inputs


def test_init_inputs_keep_their_tuples() -> None:
    assert decode_init_inputs(json.dumps([3, {"tuple": [16, 1, 1]}, [1, {"tuple": [2]}], 0.5, None])) == [3, (16, 1, 1), [1, (2,)], 0.5, None]
    with pytest.raises(ValueError, match="JSON list"):
        decode_init_inputs("{}")


def _submission(cls: type) -> ModuleType:
    module = ModuleType("submission")
    module.ModelNew = cls  # type: ignore[attr-defined]
    return module


class Linear(nn.Module):
    def __init__(self, n: int, m: int) -> None:
        super().__init__()
        self.linear = nn.Linear(n, m)
        self.alias = self.linear.weight  # held elsewhere too: the loaded values must reach it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.alias.T + self.linear.bias


def test_the_calls_state_is_copied_in_by_name_and_only_forward_runs_in_the_call() -> None:
    entry = ModuleEntry(_submission(Linear), forward_count=1, state_keys=["linear.weight", "linear.bias"], device=torch.device("cpu"))
    x, weight, bias = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    call = entry.prepare("[3, 4]", [x, weight, bias])
    assert torch.allclose(call(), x @ weight.T + bias)
    other = torch.randn(4, 3)
    assert torch.allclose(entry.prepare("[3, 4]", [x, other, bias])(), x @ other.T + bias)
    assert len(entry.models) == 1, "one model per distinct constructor arguments"


def test_missing_names_and_wrong_shapes_are_named() -> None:
    entry = ModuleEntry(_submission(Linear), forward_count=1, state_keys=["fc.weight", "linear.bias"], device=torch.device("cpu"))
    with pytest.raises(StateMismatch, match=r"no parameter or buffer named fc\.weight.*linear\.bias is \[4\] float32, the reference's is \[5\] float32"):
        entry.prepare("[3, 4]", [torch.randn(2, 3), torch.randn(4, 3), torch.randn(5)])


def test_a_file_without_modelnew_is_refused() -> None:
    with pytest.raises(AttributeError, match="neither `kernel"):
        ModuleEntry(ModuleType("submission"), 1, [], torch.device("cpu"))
