"""`kgym import models` on two real architectures (GPT-2 with its decode step, ResNet-50), one block
each: the op groups that carry the model's cost become tasks at the model's shapes, each naming the
models that use it; they pass check-tasks; a shipped honest kernel passes one and cheats fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.validation.task_validation import validate_task
from gym.schema.result import Status
from gym.tasks.loader import discover, find_task
from gym.tasks.metadata import task_metadata
from gym.tasks.models import importer
from gym.tasks.models.architectures import ARCHITECTURES
from gym.tasks.models.importer import ModelsImportReport, import_models
from gym.tasks.models.trace import trace

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def models_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models-root")


@pytest.fixture(scope="module")
def models_import(models_root: Path) -> ModelsImportReport:
    return import_models(models_root, ["gpt2", "resnet50"], layers=1, kinds=("forward",))


def test_at_least_eight_architectures_are_known() -> None:
    assert len(ARCHITECTURES) >= 8
    assert {"llama2_7b", "mistral_7b", "qwen2_7b", "mixtral_8x7b", "gpt2", "bert_base", "t5_base", "vit_b16", "convnext_tiny", "resnet50"} <= set(ARCHITECTURES)


def test_the_trace_costs_every_op_and_shares_add_up() -> None:
    model, inputs = ARCHITECTURES["gpt2"].build(1)
    groups, _ = trace(lambda: model(**inputs))
    assert abs(sum(group.share for group in groups) - 1.0) < 1e-9
    assert [group.seconds for group in groups] == sorted((group.seconds for group in groups), reverse=True)
    # The LM head (512 x 768 @ 768 x 50257) is GPT-2's costliest op at one block.
    head = groups[0]
    assert head.op == "aten.mm.default" and head.flops == 2 * 512 * 768 * 50257


def test_costly_ops_become_tasks_that_name_their_models(models_root: Path, models_import: ModelsImportReport) -> None:
    assert set(models_import.models) == {"gpt2", "gpt2_decode", "resnet50"}
    assert all(covered >= 0.7 for covered in models_import.models.values()), models_import.models
    assert models_import.count("failed") == 0, [op for op in models_import.ops if op.outcome == "failed"]
    tasks = {task.id: task for task in discover(models_root).tasks}
    assert len(tasks) == models_import.count("new") >= 30
    head = tasks["models/gpt2/mm_1"]
    assert head.spec.kernelbench is not None and set(head.spec.kernelbench.models) >= {"gpt2"}
    assert "gpt2 (" in head.spec.description and "modelled forward time" in head.spec.description
    # The bench shape is the model's own call; public and hidden shapes are scaled down.
    assert dict(head.spec.shapes.bench[0]) == {"s0": 512, "s1": 768, "s2": 50257}
    assert all(value < 50257 for shape in head.spec.shapes.public for value in shape.values())
    meta = task_metadata(head)
    assert (meta.source, meta.op_kind, meta.family) == ("models", "matmul", "aten.mm")
    # A residual add_ is imported as the add it computes; an embedding's indices stay below its rows.
    assert "torch.ops.aten.add.Tensor(x, y)" in (tasks["models/resnet50/add_14"].folder / "problem.py").read_text()
    embedding = (tasks["models/gpt2/embedding_2"].folder / "problem.py").read_text()
    assert "torch.randint(0, s" in embedding


def test_reimport_changes_nothing(models_root: Path, models_import: ModelsImportReport, monkeypatch: pytest.MonkeyPatch) -> None:
    again = import_models(models_root, ["gpt2", "resnet50"], layers=1, kinds=("forward",))
    assert again.count("new") == again.count("updated") == 0 and again.count("unchanged") == models_import.count("new")
    monkeypatch.setattr(importer, "IMPORTER_VERSION", importer.IMPORTER_VERSION + 1)
    bumped = import_models(models_root, ["gpt2"], layers=1, kinds=("forward",))
    assert bumped.count("updated") > 0 and all(op.version == 2 for op in bumped.ops if op.outcome == "updated")


@pytest.mark.parametrize("task_id", ["models/gpt2/mm_1", "models/gpt2/safe_softmax_8", "models/resnet50/native_batch_norm_1", "models/resnet50/convolution_2"])
def test_model_tasks_pass_check_tasks(models_root: Path, models_import: ModelsImportReport, task_id: str) -> None:
    check = validate_task(find_task(task_id, tasks_root=models_root))
    assert check.ok, check.problems


def test_a_shipped_kernel_passes_a_model_task_and_cheats_fail(models_root: Path, models_import: ModelsImportReport, tmp_path: Path) -> None:
    task = find_task("models/resnet50/add_14", tasks_root=models_root)
    result = grade(task, ROOT / "tasks/l1/vector_add/solution.py", GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False), secret=3)
    assert result.status == Status.passed, result.feedback
    for name, body in (("zeros", "torch.zeros_like(x)"), ("passthrough", "x.clone()")):
        cheat = tmp_path / f"{name}.py"
        cheat.write_text(CHEAT.format(body=body))
        failed = grade(task, cheat, GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False), secret=3)
        assert failed.status in (Status.wrong_answer, Status.rejected), (name, failed.status)


CHEAT = """
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def kernel(x, y):
    wrong = {body}
    out = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](wrong, out, x.numel(), BLOCK=1024)
    return out
"""
