"""Op kinds and families read from what a reference dispatches (gym.tasks.metadata), the contract
that follows the kind, and sanity bounds never tighter than the reference's own error
(gym.tasks.contract_presets)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from gym.tasks import contract_presets
from gym.tasks.contract_presets import calibrate_bounds, kind_contract, nice_bound
from gym.tasks.metadata import OP_KINDS, op_kind_from_dispatch, record_dispatch, task_dispatch, task_family, task_kind
from gym.tasks.model import Task, TaskSpec
from gym.tasks.paths import references_dir
from gym.tasks.splits import canonical_op, family_key

x, y = torch.randn(6, 5), torch.randn(6, 5)
square = torch.randn(5, 5)
spd = square @ square.T + 5 * torch.eye(5)
rows = torch.randint(0, 6, (4,))
image, weight = torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3)

# name -> (the reference, its inputs, the kind, the family)
CASES: dict[str, tuple[Callable[[], Any], list[torch.Tensor], str, str]] = {
    "addmm": (lambda: torch.addmm(square, square, square), [square], "matmul", "aten.addmm"),
    "cdist": (lambda: torch.cdist(x, y), [x, y], "matmul", "aten.cdist"),
    "softmax": (lambda: torch.softmax(x, 1), [x], "normalisation", "aten._softmax"),
    "layer_norm": (lambda: torch.nn.functional.layer_norm(x, (5,)), [x], "normalisation", "aten.native_layer_norm"),
    "matrix_exp": (lambda: torch.matrix_exp(square), [square], "linalg", "aten.matrix_exp"),
    "cholesky_inverse": (lambda: torch.cholesky_inverse(spd), [spd], "linalg", "aten.cholesky_inverse"),
    "embedding": (lambda: torch.nn.functional.embedding(rows, x), [rows, x], "indexing", "aten.embedding"),
    "sum": (lambda: x.sum(1), [x], "reduction", "aten.sum"),
    "cumsum": (lambda: x.cumsum(1), [x], "scan", "aten.cumsum"),
    "sort": (lambda: x.sort(1), [x], "selection", "aten.sort"),
    "eq": (lambda: x == y, [x, y], "integer", "aten.eq"),
    "conv2d": (lambda: torch.nn.functional.conv2d(image, weight), [image, weight], "convolution", "aten.convolution"),
    "exp": (lambda: x.exp(), [x], "elementwise", "aten.exp"),
    "mse_loss": (lambda: torch.nn.functional.mse_loss(x, y), [x, y], "reduction", "aten.mse_loss"),
    # Fusions: the most structured op's kind; a reduction rescaling what it reduced is a normalisation.
    "rms_norm": (lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), [x], "normalisation", "aten.pow+aten.mean+aten.add+aten.rsqrt+aten.mul"),
    "linear_gelu": (lambda: torch.nn.functional.gelu(x @ square + 1), [x, square], "matmul", "aten.mm+aten.add+aten.gelu"),
    "cross_entropy": (lambda: torch.nn.functional.cross_entropy(x, rows.new_zeros(6)), [x], "reduction", "aten._log_softmax+aten.nll_loss_forward"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_kind_and_family_come_from_what_runs(name: str) -> None:
    run, inputs, kind, family = CASES[name]
    dispatch, _ = record_dispatch(run, inputs)
    assert (dispatch.kind, dispatch.family) == (kind, family), dispatch
    assert dispatch.kind in OP_KINDS


def test_aliases_and_variants_share_a_family() -> None:
    def family(run: Callable[[], Any]) -> str:
        return record_dispatch(run, [x, y])[0].family

    assert family(lambda: 2.0 + x) == family(lambda: torch.add(x, y)) == family(lambda: x.clone().add_(y)) == "aten.add"
    assert family(lambda: torch.true_divide(x, y)) == family(lambda: torch.div(x, y)) == family(lambda: torch.div(x, y, rounding_mode="trunc")) == "aten.div"
    assert family(lambda: torch.min(x, y)) == family(lambda: torch.minimum(x, y)) == "aten.minimum"
    assert family(lambda: torch.ops.aten._safe_softmax(x, 1)) == family(lambda: torch.softmax(x, 1)) == "aten._softmax"
    assert family(lambda: torch.rsub(x, y)) == family(lambda: x - y) == "aten.sub"
    # Factories and bookkeeping are not what a reference computes.
    assert family(lambda: x + torch.eye(6, 5)) == "aten.add"
    assert canonical_op("torch.ops.aten.add_.Tensor") == canonical_op("add") == "aten.add"
    assert family_key(["aten.mm.default", "aten.add.Tensor", "aten.mm.default", "aten.gelu.default"]) == "aten.mm+aten.add+aten.gelu"


def test_names_do_not_decide_the_kind() -> None:
    # An integer output is integer whatever the op; a matmul stays a matmul; the schema's index argument makes indexing.
    assert op_kind_from_dispatch(["aten.argmax.default"], "int", reduces=True) == "integer"
    assert op_kind_from_dispatch(["aten._int_mm.default"], "int") == "matmul"
    assert op_kind_from_dispatch(["aten.gather.default"], "float", reduces=True) == "indexing"
    assert op_kind_from_dispatch(["aten.mean.default"], "float", reduces=True) == "reduction"
    assert op_kind_from_dispatch(["aten.mse_loss.default"], "float", reduces=False) == "elementwise"
    assert op_kind_from_dispatch(["aten.linalg_vector_norm.default", "aten.div.Tensor"], "float", reduces=False) == "normalisation"
    assert op_kind_from_dispatch([], "float") == "unknown"


def test_the_contract_follows_the_kind() -> None:
    def kinds(kind: str, output: str = "float", selected: bool = False) -> list[str]:
        return [check["kind"] for check in kind_contract(kind, output, selected)]

    assert kinds("linalg") == kinds("matmul") == kinds("normalisation") == ["oracle", "normwise", "nontrivial"]
    assert kinds("elementwise") == kinds("indexing") == ["oracle", "allclose", "nontrivial"]
    assert kinds("integer", "int") == kinds("selection", "float+int") == kinds("indexing", "float", True) == ["bitwise", "nontrivial"]
    assert [nice_bound(value) for value in (0.01, 0.011, 0.03, 0.07, 0.2)] == [0.01, 0.02, 0.05, 0.1, 0.2]


CROSS_PROBLEM = '''"""A cross product of 3-vectors, in float16 the reference's own rounding is far off the truth."""

import torch
import torch.nn as nn

s0 = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.linalg.cross(x, y, dim=1)


def get_inputs():
    x = torch.rand((s0, 3)) * 200 - 100
    y = torch.rand((s0, 3)) * 200 - 100
    return [x, y]


def get_init_inputs():
    return []
'''


def _cross_document() -> dict[str, Any]:
    return {
        "id": "fixture/cross",
        "version": 1,
        "title": "cross",
        "description": "cross",
        "params": ["x", "y"],
        "dtypes": ["float32", "float16"],
        "min_bytes": "0",
        "min_flops": "0",
        "shapes": {"public": [{"s0": 64}], "hidden": [{"s0": 100}]},
        "contract": kind_contract("elementwise", "float", False),
        "kernelbench": {
            "level": 1,
            "problem_file": "problem.py",
            "source_path": "fixture",
            "checkout": "fixture",
            "sha256": hashlib.sha256(CROSS_PROBLEM.encode()).hexdigest(),
            "importer_version": 1,
            "forward_inputs": ["x", "y"],
        },
    }


def _cross_task(folder: Path) -> tuple[Task, list[dict[str, Any]]]:
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(CROSS_PROBLEM)
    document = _cross_document()
    return Task(spec=TaskSpec.model_validate(document), folder=folder, references_dir=references_dir()), document["contract"]


def test_bounds_are_never_tighter_than_the_references_own_error(tmp_path: Path) -> None:
    task, contract = _cross_task(tmp_path / "cross")
    calibrated, notes, unbounded = calibrate_bounds(task, contract, honest=0)
    bounds = {tuple(check.get("dtypes", ["all"])): check["rtol"] for check in calibrated if check["kind"] == "allclose"}
    # float32 keeps the import's 1e-2; float16's reference is further from the truth than that, so its bound is wider.
    assert bounds[("float32",)] == 0.01 and bounds[("float16",)] > 0.01, bounds
    assert notes and "float16 allclose" in notes[0] and not unbounded
    assert [check["kind"] for check in calibrated if check["kind"] not in ("allclose",)] == ["oracle", "nontrivial"]
    # The oracle rounded to float16 (a kernel more accurate than the reference) now passes the bound.
    x = torch.rand(64, 3, dtype=torch.float64) * 200 - 100
    y = torch.rand(64, 3, dtype=torch.float64) * 200 - 100
    truth = torch.linalg.cross(x, y, dim=1)
    reference = torch.linalg.cross(x.half(), y.half(), dim=1)
    assert torch.allclose(truth.half().double(), reference.double(), rtol=bounds[("float16",)], atol=bounds[("float16",)])


def test_a_dtype_no_bound_can_judge_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cross"
    folder.mkdir()
    (folder / "problem.py").write_text(CROSS_PROBLEM)
    # As if float16's reference were hopeless: its bound passes the cap, so the dtype goes (float32, the first, never does).
    monkeypatch.setattr(contract_presets, "MAX_SANITY_BOUND", 0.02)
    document = contract_presets.calibrated_document(_cross_document(), folder)
    assert document["dtypes"] == ["float32"]
    assert all(check.get("dtypes", ["float32"]) == ["float32"] for check in document["contract"])
    assert "left out float16" in document["kernelbench"]["scaling"]
    TaskSpec.model_validate(document)


def test_a_measured_reference_is_its_call_not_its_construction(tmp_path: Path) -> None:
    # The problem's get_inputs draws with mul and sub and its Model is built on the first call: none of that is the op.
    task, _ = _cross_task(tmp_path / "cross")
    assert task_dispatch(task) == ("aten.linalg_cross.default",)
    assert (task_family(task), task_kind(task)) == ("aten.cross", "elementwise")
