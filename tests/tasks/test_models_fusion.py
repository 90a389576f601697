"""Fusion tasks (level 2) cut from traced models: consecutive ops real kernels fuse, at the models'
shapes, named by what they compute, each naming its models and the share of their time it covers,
with a head matmul as the allowed anchor. One task of each kind the issue names passes check-tasks
and an honest Triton kernel (tests/tasks/fixtures_models) passes the full grader; zeros, a
passthrough, float16 arithmetic and partial work fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.validation.task_validation import validate_task
from gym.schema.result import Status
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from gym.tasks.models.architectures import ARCHITECTURES
from gym.tasks.models.fusion import cut_of, pattern, regions
from gym.tasks.models.graph import record_graph
from tests.tasks.fixtures_models import FIXTURES, import_cases, shared_root

# One task of each kind, the model it is cut from, and its honest kernel.
CASES = {
    "linear_gelu_tanh": ("gpt2", "linear_gelu_tanh.py"),  # bias + activation after a matmul (the matmul is the anchor)
    "residual_layer_norm": ("gpt2", "residual_layer_norm.py"),  # residual add + norm
    "swiglu": ("mistral_7b", "swiglu.py"),  # gating
    "rotary": ("mistral_7b", "rotary.py"),  # rotary embedding of the query and (GQA) key heads
    "qk_norm_rotary": ("qwen3_8b", "qk_norm_rotary.py"),  # QK-norm
    "masked_attention": ("gpt2", "masked_attention.py"),  # scaled, masked softmax between the attention's matmuls
}
CHEATS = ("zeros", "passthrough", "fp16", "partial")
OPTIONS = GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False)


def _keep(name: str, source: str) -> bool:
    # The residual add + norm inside the network returns the sum too (the final one only the norm);
    # the query's QK-norm (the key's has other heads and its own weight).
    return not (name == "residual_layer_norm" and "return (" not in source or name == "qk_norm_rotary" and "q_norm_weight" not in source)


def _import(root: Path) -> dict[str, str]:
    """The six fusion tasks, imported from one block of each model: pattern -> task id."""
    return import_cases(root, CASES, "fusion", _keep)


@pytest.fixture(scope="module")
def fusion_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return shared_root(tmp_path_factory, "models-fusion-root", _import)


def _task(fusion_root: tuple[Path, dict[str, str]], name: str) -> Task:
    root, chosen = fusion_root
    return find_task(chosen[name], tasks_root=root)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fusion_tasks_pass_check_tasks_and_say_what_they_cover(fusion_root: tuple[Path, dict[str, str]], name: str) -> None:
    task = _task(fusion_root, name)
    model = CASES[name][0]
    assert task.spec.kernelbench is not None and task.spec.kernelbench.level == 2
    assert set(task.spec.kernelbench.models) == {model}
    assert re.search(rf"{model} \(\d+\.\d%\)", task.spec.description), task.spec.description
    anchors = set(task.spec.allowed_torch)
    if name == "linear_gelu_tanh":
        # The head addmm is written mm + bias: the bias is part of the epilogue the submission fuses.
        assert "aten.mm" in anchors and "torch.ops.aten.mm.default(" in (task.folder / "problem.py").read_text()
    elif name == "masked_attention":
        assert "aten.bmm" in anchors
    else:
        assert not anchors
    check = validate_task(task)
    assert check.ok, check.problems


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_honest_fusion_kernel_passes(fusion_root: tuple[Path, dict[str, str]], name: str, tmp_path: Path) -> None:
    result = grade(_task(fusion_root, name), FIXTURES / CASES[name][1], OPTIONS, secret=3)
    assert result.status == Status.passed, result.feedback


@pytest.mark.parametrize("mode", CHEATS)
def test_fusion_cheats_fail(fusion_root: tuple[Path, dict[str, str]], mode: str, tmp_path: Path) -> None:
    honest = (FIXTURES / CASES["swiglu"][1]).read_text()
    cheat = tmp_path / f"swiglu_{mode}.py"
    cheat.write_text(honest.replace('MODE = "honest"', f'MODE = "{mode}"'))
    result = grade(_task(fusion_root, "swiglu"), cheat, OPTIONS, secret=3)
    assert result.status in (Status.wrong_answer, Status.rejected), (mode, result.status, result.feedback)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gemma2_2b", {"softcap_scaled_masked_softmax", "geglu_tanh", "rms_norm_residual_rms_norm", "rotary", "matmul_softcap"}),
        ("resnet50", {"conv_batch_norm_relu", "conv_batch_norm_residual_relu", "conv_batch_norm"}),
    ],
)
def test_fusions_are_found_and_named_across_architectures(model: str, expected: set[str]) -> None:
    network, inputs = ARCHITECTURES[model].build(1)
    graph, _ = record_graph(network, lambda: network(**inputs), grad=True)
    names = set()
    for region in regions(graph):
        cut = cut_of(graph, region)
        if cut is not None:
            names.add(pattern(graph, cut, region.sdpa))
    assert expected <= names, names
