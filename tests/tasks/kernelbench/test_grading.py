"""Grading imported KernelBench tasks in the real sandbox: KernelBench's `ModelNew` format and our
`kernel(...)` format both pass when honest; a decoy kernel, a non-anchor op left to torch, weights
never loaded and weights under other names do not."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import GradeResult
from gym.tasks.kernelbench.importer import slug
from gym.tasks.model import Task

from .conftest import SUBMISSIONS

# A representative subset (every kind of fixture and every cheat); the rest grade the same way.
GRADED = [
    "level1_1_ReLU__honest",
    "level1_1_ReLU__kernel_form",
    "level1_1_ReLU__decoy",
    "level1_4_Linear__honest",
    "level1_4_Linear__kernel_form",
    "level1_4_Linear__skips_weights",
    "level1_4_Linear__renamed_weights",
    "level1_4_Linear__parameter_copy_hook",
    "level1_8_Scale_by_scalar__honest",
    "level1_9_Max_with_indices__honest",
    "level1_6_BatchNorm2d__honest",
    "level1_11_LayerNorm__honest",
    "level1_11_LayerNorm__assumes_default_affine",
    "level2_1_Conv2d_ReLU_BiasAdd__honest",
    "level2_1_Conv2d_ReLU_BiasAdd__torch_relu",
    "level3_1_MLP__honest",
]


def task_of(name: str, load: Callable[[str], Task]) -> Task:
    level, rest = name.split("_", 1)
    stem = rest.split("__")[0]
    return load(f"kb/l{level.removeprefix('level')}/{slug(stem)}")


def expected_status(path: Path) -> str:
    found = re.search(r"^# expect: (\w+)", path.read_text(), re.MULTILINE)
    assert found, f"{path.name} has no '# expect:' line"
    return found.group(1)


def quick_grade(task: Task, path: Path, **options: object) -> GradeResult:
    return grade(task, path, GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False, **options), secret=5)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", GRADED)
def test_submissions_get_the_verdict_they_deserve(name: str, kb_task: Callable[[str], Task]) -> None:
    path = SUBMISSIONS / f"{name}.py"
    result = quick_grade(task_of(name, kb_task), path)
    assert result.status.value == expected_status(path), result.feedback
    if name.endswith(("__decoy", "__torch_relu")):
        assert "torch_compute:aten.relu" in result.integrity_flags
    if name.endswith("__parameter_copy_hook"):
        assert "not a plain nn.Parameter" in (result.error or ""), result.error
    if name.endswith("__assumes_default_affine"):
        assert "reinitialised" in result.feedback, result.feedback
    if name.endswith("__renamed_weights"):
        assert "ModelNew has no parameter or buffer named linear.bias, linear.weight" in (result.error or "")


def test_a_fusion_reports_the_anchor_ops_it_left_to_torch(kb_task: Callable[[str], Task]) -> None:
    name = "level2_1_Conv2d_ReLU_BiasAdd__honest"
    result = quick_grade(task_of(name, kb_task), SUBMISSIONS / f"{name}.py")
    assert result.status.value == "passed", result.feedback
    assert set(result.torch_ops) == {"aten.convolution"} and result.triton_launch_share == pytest.approx(0.5)


def test_a_full_grade_times_a_modelnew_and_runs_its_late_calls(kb_task: Callable[[str], Task]) -> None:
    name = "level1_1_ReLU__honest"
    result = grade(task_of(name, kb_task), SUBMISSIONS / f"{name}.py", GradeOptions(sandbox="bwrap"), secret=6)
    assert result.status.value == "passed", result.feedback
    assert result.timings is not None and result.timings.candidate is not None and result.timings.interpreted


def test_the_kernelbench_contract_preset_is_graded_and_recorded(kb_task: Callable[[str], Task]) -> None:
    name = "level1_4_Linear__honest"
    result = quick_grade(task_of(name, kb_task), SUBMISSIONS / f"{name}.py", contract="kernelbench")
    assert result.status.value == "passed", result.feedback
    assert result.contract_preset == "kernelbench" and [check.kind for check in result.trials[0].checks] == ["allclose"]
    unknown = quick_grade(task_of(name, kb_task), SUBMISSIONS / f"{name}.py", contract="nope")
    assert unknown.status.value == "infra_error" and "unknown contract preset 'nope'" in (unknown.error or "")
