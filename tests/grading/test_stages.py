"""Stage outputs of a block task: a submission returning `(out, *stages)` is judged on `out` alone, and
a failing one is told the first stage outside the bound; real grades in the sandbox on a fixture block
(double -> shift -> square), plus the comparison rules on their own."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
import torch

from gym.grading.grader import grade
from gym.grading.judging.stages import first_divergent_stage, split_stage_form, stage_error
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import load_task
from gym.tasks.model import Task
from gym.tasks.prompt import render_prompt
from gym.worker.protocol import CallRecord, OutputRecord

REFERENCE = '''
"""A three-stage block: double, shift, square."""

import torch


def stages(x):
    double = x * 2.0
    shift = double + 1.0
    return {"double": double, "shift": shift, "square": shift * shift}


def block(x):
    return stages(x)["square"]


def make_inputs(shape, dtype, generator, device):
    return {"x": torch.randn(shape["N"], generator=generator, device=device, dtype=torch.float32).to(dtype)}
'''

TASK_TOML = """
id = "fx/block"
version = 1
title = "Three-stage block"
description = "kernel(x) returns ((2x + 1) ** 2), computed as stages double, shift, square."
reference = "stagefx:block"
inputs = "stagefx:make_inputs"
stages = "stagefx:stages"
stage_names = ["double", "shift", "square"]
stage_rtol = 1e-5
params = ["x"]
dtypes = ["float32"]
min_bytes = "2 * N * itemsize"
min_flops = "3 * N"

[shapes]
public = [{ N = 100 }]
hidden = [{ N = 301 }]

[[contract]]
kind = "allclose"
rtol = 1e-5
atol = 1e-6
"""

# {shift} is the added constant: 1.0 is right, 2.0 breaks the second stage; {stages} chooses the return form.
SUBMISSION = """
import torch
import triton
import triton.language as tl


@triton.jit
def _block(x, double, shift, out, n, ADD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(x + offs, mask=mask) * 2.0
    s = d + ADD
    tl.store(double + offs, d, mask=mask)
    tl.store(shift + offs, s, mask=mask)
    tl.store(out + offs, s * s, mask=mask)


def kernel(x):
    double, shift, out = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    n = x.numel()
    _block[(triton.cdiv(n, 128),)](x, double, shift, out, n, ADD={shift}, BLOCK=128)
    return {returned}
"""


@pytest.fixture(scope="module")
def block(tmp_path_factory: pytest.TempPathFactory) -> Task:
    root = tmp_path_factory.mktemp("stage-fixture")
    (root / "references").mkdir()
    (root / "references" / "stagefx.py").write_text(textwrap.dedent(REFERENCE))
    folder = root / "tasks" / "fx" / "block"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(textwrap.dedent(TASK_TOML))
    (folder / "solution.py").write_text(SUBMISSION.format(shift="1.0", returned="out, double, shift, out"))
    return load_task(folder, root / "references", root / "tasks")


def submit(tmp_path: Path, shift: str, returned: str) -> Path:
    path = tmp_path / "submission.py"
    path.write_text(SUBMISSION.format(shift=shift, returned=returned))
    return path


def test_the_stage_form_passes_when_the_output_is_right(block: Task, tmp_path: Path) -> None:
    result = grade(block, submit(tmp_path, "1.0", "out, double, shift, out"), GradeOptions(timing_reps=0))
    assert result.status == Status.passed, result.feedback


def test_a_failing_block_names_its_first_divergent_stage(block: Task, tmp_path: Path) -> None:
    result = grade(block, submit(tmp_path, "2.0", "out, double, shift, out"), GradeOptions(timing_reps=0))
    assert result.status == Status.wrong_answer
    assert "first divergent stage: 'shift'" in result.error, result.error  # type: ignore[operator]
    assert "before it, within 1e-05: double 0" in result.error  # type: ignore[operator]
    assert "first divergent stage: 'shift'" in result.feedback
    failing = [trial for trial in result.trials if not trial.passed]
    assert failing and all("first divergent stage: 'shift'" in (trial.error or "") for trial in failing)


def test_without_stages_the_feedback_says_how_to_get_them(block: Task, tmp_path: Path) -> None:
    wrong = grade(block, submit(tmp_path, "2.0", "out"), GradeOptions(timing_reps=0))
    assert wrong.status == Status.wrong_answer
    assert "return (outputs..., double, shift, square)" in wrong.error  # type: ignore[operator]
    right = grade(block, submit(tmp_path, "1.0", "out"), GradeOptions(timing_reps=0))
    assert right.status == Status.passed, right.feedback  # the stage form is optional


def test_stages_never_rescue_a_wrong_output(block: Task, tmp_path: Path) -> None:
    # Right stages, wrong final output: the verdict is on the output.
    result = grade(block, submit(tmp_path, "1.0", "shift, double, shift, out"), GradeOptions(timing_reps=0))
    assert result.status == Status.wrong_answer
    assert "every stage is within" in result.error  # type: ignore[operator]


def test_a_wrong_count_is_not_the_stage_form(block: Task, tmp_path: Path) -> None:
    result = grade(block, submit(tmp_path, "1.0", "out, double"), GradeOptions(timing_reps=0))
    assert result.status == Status.wrong_answer and "returned tuple" in result.error  # type: ignore[operator]


def test_the_prompt_documents_the_stage_form(block: Task) -> None:
    prompt = render_prompt(block, cpu=False)
    assert "## Stages" in prompt and "(outputs..., double, shift, square)" in prompt


def record(container: str, count: int) -> CallRecord:
    return CallRecord(id=0, ok=True, container=container, outputs=[OutputRecord(python_type="torch.Tensor", exact_tensor=True) for _ in range(count)])


def test_split_stage_form() -> None:
    outputs, stages = split_stage_form(record("tuple", 4), 1, False, 3)
    assert outputs.container == "tensor" and len(outputs.outputs) == 1 and len(stages) == 3
    outputs, stages = split_stage_form(record("tuple", 5), 2, True, 3)
    assert outputs.container == "tuple" and len(outputs.outputs) == 2 and len(stages) == 3
    for unchanged in (record("tuple", 3), record("tensor", 1), record("list", 4)):
        assert split_stage_form(unchanged, 1, False, 3) == (unchanged, [])
    assert split_stage_form(record("tuple", 4), 1, False, 0)[1] == []


def test_stage_errors() -> None:
    reference = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert stage_error(reference.float(), reference)[0] == 0.0
    assert stage_error(torch.zeros(2), reference)[0] == math.inf
    assert stage_error(torch.tensor([1.0, float("nan"), 3.0]), reference)[0] == math.inf
    ids = torch.tensor([3, 1, 2])
    assert stage_error(ids, ids)[0] == 0.0 and stage_error(torch.tensor([3, 2, 1]), ids) == (math.inf, "2 of 3 elements differ")
    line = first_divergent_stage(["a", "b"], [reference.float(), reference.float() * 2], {"a": reference, "b": reference}, 1e-3)
    assert line.startswith("first divergent stage: 'b', normwise relative error 1") and "a 0" in line
