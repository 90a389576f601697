"""`kgym import opinfo` on a fixed sample of ops: what becomes a task (and what does not, with its
reason), the problems it writes, idempotent re-import, check-tasks, and real grades."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.validation.task_validation import validate_task
from gym.schema.result import Status
from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate
from gym.tasks.loader import discover, find_task
from gym.tasks.metadata import task_metadata
from gym.tasks.opinfo import importer
from gym.tasks.opinfo.importer import OpInfoImportReport, import_opinfo, task_id_of
from gym.tasks.opinfo.samples import choose_sample, load_op_db

from .conftest import EXCLUDED, IMPORTED

ROOT = Path(__file__).resolve().parents[3]


def test_each_sample_op_is_imported_or_left_out_with_its_reason(opinfo_import: OpInfoImportReport) -> None:
    by_op = {op.op: op for op in opinfo_import.ops}
    for name in IMPORTED:
        assert by_op[name].outcome == "new", (name, by_op[name])
        assert by_op[name].task_id == f"opinfo/{name.replace('.', '__', 1) if name.startswith('max.') else name.replace('.', '_')}"
    for name, reason in EXCLUDED.items():
        assert (by_op[name].outcome, by_op[name].reason) == ("excluded", reason), by_op[name]
    assert opinfo_import.reasons()["random"] == ["bernoulli"]


def test_the_problem_calls_the_op_on_inputs_of_the_sample_kind(opinfo_root: Path, opinfo_import: OpInfoImportReport) -> None:
    task = find_task("opinfo/cat", tasks_root=opinfo_root)
    source = (task.folder / "problem.py").read_text()
    # A list of tensors becomes one parameter per tensor, passed as the list the op takes.
    assert "return torch.cat([x0, x1" in source
    gelu = find_task("opinfo/nn_functional_gelu", tasks_root=opinfo_root)
    module = instantiate((gelu.folder / "problem.py").read_text(), dict(gelu.spec.shapes.public[0]), "gelu")
    model = module.Model(*init_inputs(module))
    (x,) = forward_inputs(module)
    assert torch.equal(model(x), torch.nn.functional.gelu(x))
    # The benchmark shape is GPU-sized; the public one CPU-sized.
    cost = {str(entry.shape): entry.bytes for entry in gelu.spec.kernelbench.cost}  # type: ignore[union-attr]
    assert cost[str(gelu.spec.shapes.bench[0])] >= 4 << 20 > cost[str(gelu.spec.shapes.public[0])]


def test_contracts_follow_the_output_kind(opinfo_root: Path, opinfo_import: OpInfoImportReport) -> None:
    def kinds(task_id: str) -> list[str]:
        # A sanity bound calibrated per dtype is one check per dtype group: each kind once.
        return list(dict.fromkeys(check.kind for check in find_task(task_id, tasks_root=opinfo_root).spec.contract))

    assert kinds("opinfo/eq") == ["bitwise", "nontrivial"]
    assert kinds("opinfo/sort") == ["bitwise", "nontrivial"]  # values and indices are the input's own
    assert kinds("opinfo/exp") == ["oracle", "allclose", "nontrivial"]
    assert kinds("opinfo/sum") == ["oracle", "normwise", "nontrivial"]
    assert kinds("opinfo/matmul") == ["oracle", "normwise", "nontrivial"]
    sign = find_task("opinfo/sign", tasks_root=opinfo_root)
    assert "float16_reference_passes" in sign.spec.validation_exempt
    # isinf needs infinities among its inputs to say anything: they are drawn with some.
    assert "_with_specials" in (find_task("opinfo/isinf", tasks_root=opinfo_root).folder / "problem.py").read_text()


def test_metadata_comes_from_the_import(opinfo_root: Path, opinfo_import: OpInfoImportReport) -> None:
    meta = task_metadata(find_task("opinfo/matmul", tasks_root=opinfo_root))
    # The family and kind are what the reference dispatches (torch.matmul of OpInfo's batched sample is aten.bmm).
    assert (meta.source, meta.level, meta.family, meta.op_kind, meta.aten_ops) == ("opinfo", 1, "aten.bmm", "matmul", 1)
    assert meta.bench_flops and meta.bench_bytes and meta.arithmetic_intensity == pytest.approx(meta.bench_flops / meta.bench_bytes, rel=1e-3)
    assert task_metadata(find_task("opinfo/gather", tasks_root=opinfo_root)).op_kind == "indexing"


@pytest.mark.parametrize("task_id", ["opinfo/add", "opinfo/softmax", "opinfo/gather", "opinfo/matmul", "opinfo/eq", "opinfo/isinf"])
def test_imported_tasks_pass_check_tasks(opinfo_root: Path, opinfo_import: OpInfoImportReport, task_id: str) -> None:
    check = validate_task(find_task(task_id, tasks_root=opinfo_root))
    assert check.ok, check.problems


def test_reimport_changes_nothing_and_a_new_importer_bumps_versions(
    opinfo_root: Path, opinfo_import: OpInfoImportReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["abs", "max.binary", "bernoulli"]
    first = import_opinfo(tmp_path, names)
    before = {task.id: (task.spec.version, task.split) for task in discover(tmp_path).tasks}
    again = import_opinfo(tmp_path, names)
    assert [op.outcome for op in again.ops] == ["unchanged", "unchanged", "excluded"]
    assert {task.id: (task.spec.version, task.split) for task in discover(tmp_path).tasks} == before
    # The same op imports into the same problem, byte for byte, wherever it is imported.
    assert (tmp_path / "opinfo/abs/problem.py").read_bytes() == (opinfo_root / "opinfo/abs/problem.py").read_bytes()
    monkeypatch.setattr(importer, "IMPORTER_VERSION", importer.IMPORTER_VERSION + 1)
    bumped = import_opinfo(tmp_path, names)
    assert [op.outcome for op in bumped.ops] == ["updated", "updated", "excluded"]
    assert [op.version for op in bumped.ops[:2]] == [2, 2]
    assert first.ops[0].version == 1


def test_an_unknown_op_is_a_clear_error(tmp_path: Path) -> None:
    from gym.errors import ProblemError

    with pytest.raises(ProblemError, match="not in this torch's OpInfo database: no_such_op"):
        import_opinfo(tmp_path, ["no_such_op"])


def test_task_ids_are_unique_across_the_database() -> None:
    ids = [task_id_of(entry) for entry in load_op_db()]
    assert len(ids) == len(set(ids))


def test_a_composite_op_is_left_out() -> None:
    entry = next(entry for entry in load_op_db() if entry.full_name == "nn.functional.linear")
    chosen = choose_sample(entry)
    # linear dispatches addmm (with a transpose view): one compute op, so it imports; a composite would not.
    assert not hasattr(chosen, "reason") or chosen.reason == "many_ops"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("task_id", "solution"),
    [("opinfo/nn_functional_silu", "tasks/l1/silu/solution.py"), ("opinfo/exp", None)],
)
def test_an_honest_kernel_passes_and_cheats_fail(
    opinfo_root: Path, opinfo_import: OpInfoImportReport, tmp_path: Path, task_id: str, solution: str | None
) -> None:
    task = find_task(task_id, tasks_root=opinfo_root)
    if solution is not None:
        honest = ROOT / solution
    else:
        honest = tmp_path / "exp.py"
        honest.write_text(EXP_KERNEL)
    result = grade(task, honest, GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False), secret=7)
    assert result.status == Status.passed, result.feedback
    zeros = tmp_path / "zeros.py"
    zeros.write_text(CHEAT.format(body="tl.store(out_ptr + offs, tl.zeros([BLOCK], tl.float32).to(out_ptr.dtype.element_ty), mask=mask)"))
    passthrough = tmp_path / "passthrough.py"
    passthrough.write_text(CHEAT.format(body="tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)"))
    for cheat in (zeros, passthrough):
        failed = grade(task, cheat, GradeOptions(sandbox="bwrap", timing_reps=0, late_calls=False), secret=7)
        assert failed.status in (Status.wrong_answer, Status.rejected), (cheat.name, failed.status, failed.feedback)


EXP_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _exp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, tl.exp(x).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    out = torch.empty_like(x)
    n = x.numel()
    _exp[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
"""

CHEAT = """
import torch
import triton
import triton.language as tl


@triton.jit
def _cheat(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    {body}


def kernel(x):
    out = torch.empty_like(x)
    n = x.numel()
    _cheat[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
"""


def test_the_cli_imports_and_records_splits(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gym.cli import app
    from gym.tasks.splits import read_splits

    result = CliRunner().invoke(app, ["import", "opinfo", "abs", "bernoulli", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "1 new" in result.output and "random (1): bernoulli" in result.output
    assert set(read_splits(tmp_path).tasks) == {"opinfo/abs"}
    unknown = CliRunner().invoke(app, ["import", "opinfo", "no_such_op", "--out", str(tmp_path)])
    assert unknown.exit_code == 2 and "not in this torch's OpInfo database" in unknown.output
