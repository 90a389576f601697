"""Backward tasks from traced models: autograd of the models' norms, activations, softmax, embedding
and fused patterns (traced on the meta device, as the forward is), graded against autograd's
gradients. One task of each kind passes check-tasks and an honest Triton kernel
(tests/tasks/fixtures_models) passes the full grader; zeros, a passthrough, float16 arithmetic and
partial work fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.validation.task_validation import validate_task
from gym.schema.result import Status
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from tests.tasks.fixtures_models import FIXTURES, import_cases, shared_root

# One backward task of each kind, the model it is cut from, and its honest kernel.
CASES = {
    "native_layer_norm": ("gpt2", "layer_norm_backward.py"),  # a norm
    "gelu_tanh": ("gpt2", "gelu_tanh_backward.py"),  # an activation (GPT-2 writes its GELU out)
    "safe_softmax": ("gpt2", "softmax_backward.py"),  # the attention's softmax
    "embedding": ("gpt2", "embedding_backward.py"),  # the token embedding
    "swiglu": ("mistral_7b", "swiglu_backward.py"),  # a fused pattern
}
# Zeros and the input passed through fail every task's check-tasks (its trivial answers) and the fusion
# tests grade them; here the grader is shown float16 arithmetic and partial work.
CHEATS = ("fp16", "partial")
OPTIONS = GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False)


def _import(root: Path) -> dict[str, str]:
    """The five backward tasks, imported from one block of each model: pattern -> task id."""
    return import_cases(root, CASES, "backward")


@pytest.fixture(scope="module")
def backward_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return shared_root(tmp_path_factory, "models-backward-root", _import)


def _task(backward_root: tuple[Path, dict[str, str]], name: str) -> Task:
    root, chosen = backward_root
    return find_task(chosen[name], tasks_root=root)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_tasks_pass_check_tasks(backward_root: tuple[Path, dict[str, str]], name: str) -> None:
    task = _task(backward_root, name)
    model = CASES[name][0]
    assert task.id.startswith(f"models/backward/{model}/{name}_backward_")
    assert task.spec.kernelbench is not None and set(task.spec.kernelbench.models) == {model}
    assert re.search(rf"{model} \(\d+\.\d%\)", task.spec.description) and "modelled backward time" in task.spec.description
    assert "torch.autograd.grad(" in (task.folder / "problem.py").read_text()
    check = validate_task(task)
    assert check.ok, check.problems


def test_the_reference_is_autograds_gradient(backward_root: tuple[Path, dict[str, str]]) -> None:
    # SwiGLU: d gate = g up s (1 + gate (1 - s)), d up = g silu(gate), with s = sigmoid(gate).
    task = _task(backward_root, "swiglu")
    shape = dict(task.spec.shapes.public[0])
    module = instantiate((task.folder / "problem.py").read_text(), shape, task.id)
    torch.manual_seed(0)
    grad, gate, up = forward_inputs(module)
    with torch.no_grad():
        d_gate, d_up = module.Model(*init_inputs(module))(grad, gate, up)
    s = torch.sigmoid(gate.double())
    g = grad.double().reshape(gate.shape)
    torch.testing.assert_close(d_up.double(), g * gate.double() * s)
    torch.testing.assert_close(d_gate.double(), g * up.double() * s * (1 + gate.double() * (1 - s)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_honest_backward_kernel_passes(backward_root: tuple[Path, dict[str, str]], name: str) -> None:
    result = grade(_task(backward_root, name), FIXTURES / CASES[name][1], OPTIONS, secret=3)
    assert result.status == Status.passed, result.feedback


@pytest.mark.parametrize("mode", CHEATS)
def test_backward_cheats_fail(backward_root: tuple[Path, dict[str, str]], mode: str, tmp_path: Path) -> None:
    honest = (FIXTURES / CASES["native_layer_norm"][1]).read_text()
    cheat = tmp_path / f"layer_norm_backward_{mode}.py"
    cheat.write_text(honest.replace('MODE = "honest"', f'MODE = "{mode}"'))
    result = grade(_task(backward_root, "native_layer_norm"), cheat, OPTIONS, secret=3)
    assert result.status in (Status.wrong_answer, Status.rejected), (mode, result.status, result.feedback)
