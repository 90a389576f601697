"""Reading a KernelBench problem file and re-running it at other sizes."""

from __future__ import annotations

import pytest

from gym.errors import ProblemError
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate, parse_problem, with_sizes

SOURCE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int, sizes: list):
        super().__init__()
        self.fc = nn.Linear(features, sizes[0])

    def forward(self, x, scale: float):
        return self.fc(x) * scale


batch_size = 16  # the batch
features = 64
height, width = 32, 48
sizes = [40, 80]
N = 2048 * 2
derived = features * 2
features = 64
kernel_size = (3, 5)


def get_inputs():
    return [torch.randn(batch_size, features), 0.5]


def get_init_inputs():
    return [features, sizes]
"""


def test_sizes_are_the_int_literals_of_the_module_whatever_their_form() -> None:
    problem = parse_problem(SOURCE)
    assert problem.sizes == {
        "batch_size": 16,
        "height": 32,
        "width": 48,
        "sizes_0": 40,
        "sizes_1": 80,
        "N": 4096,
        "features": 64,
        "kernel_size_0": 3,
        "kernel_size_1": 5,
    }
    assert problem.forward_params == ["x", "scale"] and problem.init_params == ["features", "sizes"]


def test_with_sizes_replaces_only_those_literals_and_keeps_every_other_byte() -> None:
    text = with_sizes(SOURCE, {"batch_size": 3, "width": 7, "sizes_1": 9, "N": 100})
    assert "batch_size = 3  # the batch" in text and "height, width = 32, 7" in text and "sizes = [40, 9]" in text and "N = 100\n" in text
    assert text.replace("= 3  #", "= 16  #").replace("32, 7", "32, 48").replace("[40, 9]", "[40, 80]").replace("N = 100", "N = 2048 * 2") == SOURCE
    with pytest.raises(ProblemError, match="no module-level int constant named nope"):
        with_sizes(SOURCE, {"nope": 1})


def test_instantiate_runs_the_problem_at_the_new_sizes() -> None:
    module = instantiate(SOURCE, {"batch_size": 2, "sizes_0": 5}, "test")
    assert init_inputs(module) == [64, [5, 80]]
    x, scale = forward_inputs(module)
    assert list(x.shape) == [2, 64] and scale == 0.5
    assert list(module.Model(*init_inputs(module))(x, scale).shape) == [2, 5]


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def get_inputs(): pass\ndef get_init_inputs(): pass\n", "defines no Model"),
        ("class Model:\n    def forward(self, *xs): pass\ndef get_inputs(): pass\ndef get_init_inputs(): pass\n", r"\*args"),
        ("class Model:\n    pass\ndef get_inputs(): pass\ndef get_init_inputs(): pass\n", "no forward"),
        ("class Model(:\n", "not valid Python"),
    ],
)
def test_a_file_that_is_not_a_kernelbench_problem_is_refused_with_the_reason(source: str, reason: str) -> None:
    with pytest.raises(ProblemError, match=reason):
        parse_problem(source)
