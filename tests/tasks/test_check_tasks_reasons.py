"""`kgym check-tasks` names an ill-posed reference (gym.grading.validation.task_validation): one that reads
outside its inputs (`out_of_bounds_read`), one with a zero-size compute dimension
(`degenerate_dimension`) and one that is nondeterministic (`nondeterministic_reference`), on task
folders built here."""

from __future__ import annotations

import pytest
import torch

from gym.grading.validation.task_validation import (
    DEGENERATE_DIMENSION,
    NONDETERMINISTIC_REFERENCE,
    OUT_OF_BOUNDS_READ,
    REASONS,
    TaskCheck,
    _placed,
    validate_task,
)
from gym.tasks.loader import load_task
from gym.tasks.model import Task

REFERENCES = '''\
"""Ill-posed references for check-tasks tests."""
import torch


def make_ctc_inputs(shape, dtype, generator, device):
    """CTC inputs whose labels run up to three times the class count (the issue's hidden shape)."""
    t, n, c, s = shape["T"], shape["N"], shape["C"], shape["S"]
    log_probs = torch.randn(t, n, c, generator=generator, dtype=dtype, device=device).log_softmax(2)
    targets = torch.randint(1, 3 * c, (n, s), generator=generator, device=device)
    return {"log_probs": log_probs, "targets": targets}


def make_fair_ctc_inputs(shape, dtype, generator, device):
    inputs = make_ctc_inputs(shape, dtype, generator, device)
    inputs["targets"] = inputs["targets"] % (shape["C"] - 1) + 1
    return inputs


def ctc(log_probs, targets):
    t, n = log_probs.shape[0], log_probs.shape[1]
    return torch.nn.functional.ctc_loss(log_probs, targets, [t] * n, [targets.shape[1]] * n, reduction="none")


def make_addmm_inputs(shape, dtype, generator, device):
    """addmm with an inner dimension of 0 (the issue's opinfo/addmm): only beta * c is left."""
    m, n = shape["M"], shape["N"]
    c = torch.randn(m, n, generator=generator, dtype=dtype, device=device)
    return {"c": c, "a": torch.empty(m, 0, dtype=dtype, device=device), "b": torch.empty(0, n, dtype=dtype, device=device)}


def addmm(c, a, b):
    return torch.addmm(c, a, b, beta=0.2, alpha=0.6)


def make_inputs(shape, dtype, generator, device):
    return {"x": torch.randn(shape["M"], shape["N"], generator=generator, dtype=dtype, device=device)}


def none_selected(x):
    return x[x > 1e9]


def noisy(x):
    return x * 2 + torch.rand(x.shape, dtype=x.dtype) * 1e-3
'''

TASK = """\
id = "{id}"
version = 1
title = "Ill-posed {name}"
description = "A deliberately ill-posed task."
reference = "illref:{reference}"
inputs = "illref:{inputs}"
params = {params}
dtypes = ["float32"]
min_bytes = "0"
min_flops = "0"

[shapes]
public = [{public}]
hidden = [{hidden}]

[[contract]]
kind = "allclose"
rtol = 1e-5
atol = 1e-5

[[contract]]
kind = "nontrivial"
"""

CTC_SHAPES = ("{ T = 12, N = 3, C = 4, S = 5 }", "{ T = 18, N = 5, C = 6, S = 7 }")
MATRIX_SHAPES = ("{ M = 8, N = 6 }", "{ M = 13, N = 11 }")


@pytest.fixture(scope="module")
def ill(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    base = tmp_path_factory.mktemp("ill")
    refs, root = base / "refs", base / "tasks"
    refs.mkdir()
    (refs / "illref.py").write_text(REFERENCES)
    documents = {
        "ctc_past_classes": ("ctc", "make_ctc_inputs", ["log_probs", "targets"], CTC_SHAPES),
        "ctc": ("ctc", "make_fair_ctc_inputs", ["log_probs", "targets"], CTC_SHAPES),
        "inner_zero": ("addmm", "make_addmm_inputs", ["c", "a", "b"], MATRIX_SHAPES),
        "nothing_out": ("none_selected", "make_inputs", ["x"], MATRIX_SHAPES),
        "noisy": ("noisy", "make_inputs", ["x"], MATRIX_SHAPES),
    }
    tasks = {}
    for name, (reference, inputs, params, (public, hidden)) in documents.items():
        folder = root / "ill" / name
        folder.mkdir(parents=True)
        params_text = "[" + ", ".join(f'"{param}"' for param in params) + "]"
        (folder / "task.toml").write_text(
            TASK.format(id=f"ill/{name}", name=name, reference=reference, inputs=inputs, params=params_text, public=public, hidden=hidden)
        )
        (folder / "solution.py").write_text("def kernel(*args):\n    raise NotImplementedError\n")
        tasks[name] = load_task(folder, references_dir=refs, tasks_root=root)
    return tasks


def reasons(check: TaskCheck) -> set[str]:
    return {problem.reason for problem in check.problems}


def shown(check: TaskCheck) -> str:
    return "\n".join(f"{problem.reason}: {problem.detail}" for problem in check.problems)


def test_the_new_reasons_are_known_and_ordered_before_the_output_checks() -> None:
    assert {DEGENERATE_DIMENSION, OUT_OF_BOUNDS_READ, NONDETERMINISTIC_REFERENCE} <= set(REASONS)
    assert REASONS.index(DEGENERATE_DIMENSION) < REASONS.index(OUT_OF_BOUNDS_READ) < REASONS.index(NONDETERMINISTIC_REFERENCE)


def test_labels_past_the_class_count_are_an_out_of_bounds_read(ill: dict[str, Task]) -> None:
    check = validate_task(ill["ctc_past_classes"])
    assert OUT_OF_BOUNDS_READ in reasons(check), shown(check)
    # Said once, as what it is: reading whatever memory holds also looks nondeterministic.
    assert NONDETERMINISTIC_REFERENCE not in reasons(check), shown(check)
    detail = next(problem.detail for problem in check.problems if problem.reason == OUT_OF_BOUNDS_READ)
    assert "reads outside its inputs" in detail and "float32 public #1" in detail


def test_the_same_op_with_labels_in_range_passes(ill: dict[str, Task]) -> None:
    check = validate_task(ill["ctc"])
    assert check.ok and not check.problems, shown(check)


def test_a_zero_size_inner_dimension_is_degenerate(ill: dict[str, Task]) -> None:
    check = validate_task(ill["inner_zero"])
    assert DEGENERATE_DIMENSION in reasons(check), shown(check)
    detail = next(problem.detail for problem in check.problems if problem.reason == DEGENERATE_DIMENSION)
    assert "a (8, 0)" in detail and "b (0, 6)" in detail and "zero-size dimension" in detail


def test_only_empty_outputs_are_degenerate(ill: dict[str, Task]) -> None:
    check = validate_task(ill["nothing_out"])
    assert check.problems[0].reason == DEGENERATE_DIMENSION, shown(check)  # named first (nontrivial fails too)
    assert "every output is empty" in check.problems[0].detail


def test_noise_is_nondeterminism_not_an_out_of_bounds_read(ill: dict[str, Task]) -> None:
    check = validate_task(ill["noisy"])
    assert reasons(check) == {NONDETERMINISTIC_REFERENCE}, shown(check)


def test_placing_an_input_keeps_its_values_and_strides_before_sentinels() -> None:
    base = torch.arange(12.0).reshape(3, 4)
    for value in (base, base.t(), base[:, ::2]):
        placed = _placed(value, (float("nan"), 0))
        assert torch.equal(placed, value) and placed.stride() == value.stride()
        assert placed.storage_offset() == 0  # where an input starts: as_strided's explicit offsets read the same elements
        storage = torch.empty(0).set_(placed.untyped_storage())  # the whole buffer, sentinels included
        assert int(torch.isnan(storage).sum()) == storage.numel() - len({*value.flatten().tolist()})
    indices = _placed(torch.tensor([3, 1, 2]), (float("nan"), 1))
    assert torch.equal(indices, torch.tensor([3, 1, 2])) and int(torch.empty(0, dtype=torch.int64).set_(indices.untyped_storage()).sum()) > 6
    broadcast = torch.ones(3).expand(2, 3)
    assert torch.equal(_placed(broadcast, (1e4, 1)), broadcast)  # overlapping: copied as it is
    assert _placed(2.5, (1e4, 1)) == 2.5


def test_a_healthy_shipped_task_reads_only_its_inputs() -> None:
    # Every shipped task's verdict is checked in tests/grading/test_task_validation.py; here, the placement check alone.
    from gym.grading.validation.task_validation import _check_out_of_bounds, _make_trial
    from gym.tasks.loader import discover

    task = next(task for task in discover().tasks if task.id == "l1/vector_add")
    trial = _make_trial(task, "float32", "public", 0, task.spec.shapes.public[0], torch.device("cpu"))
    assert _check_out_of_bounds(task, trial) is None
