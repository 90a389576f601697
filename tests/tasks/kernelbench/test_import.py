"""`kgym import kernelbench`: task folders in a task root outside the repo, idempotent re-import,
version bumps, recorded provenance, named failures; imported tasks load, list and reproduce."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gym.cli import app
from gym.errors import TaskLoadError
from gym.tasks.inputs import generate_inputs
from gym.tasks.kernelbench.importer import ImportReport, import_checkout
from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task
from gym.tasks.references import reference_outputs

from .conftest import FIXTURES

CPU = torch.device("cpu")


def test_every_fixture_problem_imports_into_its_own_task_folder(kb_import: ImportReport, kb_root: Path) -> None:
    assert kb_import.count("failed") == 0, [p.reason for p in kb_import.problems if p.outcome == "failed"]
    assert kb_import.count("new") == len(list(FIXTURES.glob("KernelBench/level*/*.py"))) >= 15
    ids = [problem.task_id for problem in kb_import.problems]
    assert "kb/l1/1_relu" in ids and "kb/l2/1_conv2d_relu_biasadd" in ids and "kb/l3/1_mlp" in ids
    folder = kb_root / "kb/l1/4_linear"
    source = (FIXTURES / "KernelBench/level1/4_Linear.py").read_bytes()
    assert (folder / "problem.py").read_bytes() == source
    task = find_task("kb/l1/4_linear", tasks_root=kb_root)
    origin = task.spec.kernelbench
    assert origin is not None and origin.sha256 == hashlib.sha256(source).hexdigest()
    assert origin.source_path == "KernelBench/level1/4_Linear.py" and origin.checkout == str(FIXTURES.resolve())
    assert task.spec.params == ["x", "linear_weight", "linear_bias"] and origin.state == {"linear_weight": "linear.weight", "linear_bias": "linear.bias"}
    assert not task.has_solution


def test_suites_nest_and_list_by_prefix(kb_import: ImportReport, kb_root: Path) -> None:
    level1 = discover(kb_root, suite="kb/l1").tasks
    everything = discover(kb_root, suite="kb").tasks
    assert level1 and all(task.suite == "kb/l1" for task in level1)
    assert {task.suite for task in everything} == {"kb/l1", "kb/l2", "kb/l3"}


def test_levels_two_and_three_may_leave_their_anchor_ops_to_torch(kb_task: Callable[[str], Task]) -> None:
    conv = kb_task("kb/l2/1_conv2d_relu_biasadd").spec
    assert conv.kernelbench is not None and conv.kernelbench.anchors == ["aten.convolution"] and "aten.convolution" in conv.allowed_torch
    assert "aten.addmm" in kb_task("kb/l3/1_mlp").spec.allowed_torch
    # Level 1: the whole op in Triton, whatever the reference calls.
    assert kb_task("kb/l1/5_conv2d_standard").spec.allowed_torch == []


def test_inputs_and_weights_are_reproducible_from_the_seed(kb_task: Callable[[str], Task]) -> None:
    task = kb_task("kb/l1/4_linear")
    shape = task.spec.shapes.public[0]
    first = generate_inputs(task, shape, torch.float32, 11, CPU)
    again = generate_inputs(task, shape, torch.float32, 11, CPU)
    other = generate_inputs(task, shape, torch.float32, 12, CPU)
    assert all(torch.equal(first[name], again[name]) for name in task.spec.params)
    assert not torch.equal(first["x"], other["x"]) and not torch.equal(first["linear_weight"], other["linear_weight"])
    # The global RNG is left as it was.
    state = torch.random.get_rng_state()
    generate_inputs(task, shape, torch.float32, 13, CPU)
    assert torch.equal(state, torch.random.get_rng_state())
    expected, _ = reference_outputs(task, first, shape)
    assert torch.allclose(expected[0], first["x"] @ first["linear_weight"].T + first["linear_bias"], rtol=1e-5, atol=1e-5)


def _checkout(tmp_path: Path) -> Path:
    checkout = tmp_path / "KernelBench-clone"
    shutil.copytree(FIXTURES, checkout)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fixtures"]):
        subprocess.run(["git", "-C", str(checkout), *command], check=True, env=env)
    return checkout


def test_reimport_is_idempotent_and_a_changed_problem_gets_a_new_version(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    root = tmp_path / "root"
    first = import_checkout(checkout, root, levels=(1,))
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert first.commit == commit and find_task("kb/l1/1_relu", tasks_root=root).spec.kernelbench.commit == commit  # type: ignore[union-attr]
    task_file = root / "kb/l1/1_relu/task.toml"
    written = task_file.read_bytes()
    again = import_checkout(checkout, root, levels=(1,))
    assert again.count("unchanged") == len(again.problems) and task_file.read_bytes() == written
    problem = checkout / "KernelBench/level1/1_ReLU.py"
    problem.write_text(problem.read_text().replace("dim = 16384", "dim = 8192"))
    third = import_checkout(checkout, root, levels=(1,))
    changed = [p for p in third.problems if p.outcome == "updated"]
    assert [p.task_id for p in changed] == ["kb/l1/1_relu"] and changed[0].version == 2
    assert find_task("kb/l1/1_relu", tasks_root=root).spec.shapes.bench == [{"batch_size": 16, "dim": 8192}]


def test_a_problem_that_cannot_be_imported_is_named_with_its_reason(tmp_path: Path) -> None:
    checkout = tmp_path / "co"
    level = checkout / "KernelBench" / "level1"
    level.mkdir(parents=True)
    relu = (FIXTURES / "KernelBench/level1/1_ReLU.py").read_text()
    (level / "1_Good.py").write_text(relu)
    (level / "2_No_model.py").write_text("def get_inputs():\n    return []\n")
    (level / "3_Returns_a_list.py").write_text(relu.replace("return torch.relu(x)", "return [x, x]"))
    (level / "4_Hard_reshape.py").write_text(relu.replace("return torch.relu(x)", "return x.view(16, 128, 128)"))
    report = import_checkout(checkout, tmp_path / "root")
    reasons = {p.source_path.rsplit("/", 1)[-1]: p.reason for p in report.problems}
    assert reasons["1_Good.py"] is None
    assert "defines no Model" in (reasons["2_No_model.py"] or "")
    assert "tuple of tensors" in (reasons["3_Returns_a_list.py"] or "")
    # A hard-coded reshape only runs at the original sizes: it imports unscaled, and the record says why.
    assert reasons["4_Hard_reshape.py"] is None
    hard = find_task("kb/l1/4_hard_reshape", tasks_root=tmp_path / "root").spec
    assert hard.shapes.public == hard.shapes.bench and set(hard.shapes.exempt) == {"batch_size", "dim"}
    assert hard.kernelbench is not None and "dim stays 16384" in hard.kernelbench.scaling


def test_an_imported_task_whose_source_changed_on_disk_does_not_load(tmp_path: Path) -> None:
    root = tmp_path / "root"
    import_checkout(_checkout(tmp_path), root, levels=(1,))
    (root / "kb/l1/1_relu/problem.py").write_text("# edited\n")
    with pytest.raises(TaskLoadError, match="changed since it was imported"):
        find_task("kb/l1/1_relu", tasks_root=root)


def test_degenerate_tasks_are_left_out_of_suites_unless_asked_for(tmp_path: Path) -> None:
    root = tmp_path / "root"
    import_checkout(_checkout(tmp_path), root, levels=(1,))
    task_file = root / "kb/l1/13_constant_output/task.toml"
    task_file.write_text('degenerate = "constant_output: the output does not depend on the inputs"\n' + task_file.read_text())
    assert "kb/l1/13_constant_output" not in [task.id for task in discover(root).tasks]
    assert "kb/l1/13_constant_output" in [task.id for task in discover(root, include_degenerate=True).tasks]
    assert find_task("kb/l1/13_constant_output", tasks_root=root).spec.degenerate


def test_the_cli_imports_lists_and_shows(tmp_path: Path) -> None:
    runner = CliRunner()
    root = tmp_path / "root"
    done = runner.invoke(app, ["import", "kernelbench", str(FIXTURES), "--levels", "1,2", "--out", str(root)])
    assert done.exit_code == 0, done.output
    assert "new" in done.output and not (root / "kb/l3").exists()
    listed = runner.invoke(app, ["--tasks", str(root), "list", "--suite", "kb/l2", "--json"])
    assert listed.exit_code == 0, listed.output
    shown = runner.invoke(app, ["--tasks", str(root), "show", "kb/l2/1_conv2d_relu_biasadd"])
    assert shown.exit_code == 0, shown.output
    for text in (
        "class Model(nn.Module)",
        "class ModelNew",
        "def kernel(x, bias, conv_weight, conv_bias)",
        "aten.convolution",
        "`conv_weight` is `conv.weight`",
    ):
        assert text in shown.output
    bad = runner.invoke(app, ["import", "kernelbench", str(FIXTURES), "--levels", "4", "--out", str(root)], env={"COLUMNS": "400"})
    assert bad.exit_code == 2 and "Hugging Face" in bad.output


@pytest.mark.skipif(not os.environ.get("KGYM_KERNELBENCH"), reason="set KGYM_KERNELBENCH to a KernelBench checkout to import the real one")
def test_the_real_kernelbench_imports(tmp_path: Path) -> None:
    report = import_checkout(Path(os.environ["KGYM_KERNELBENCH"]), tmp_path / "root")
    failed = {p.source_path: p.reason for p in report.problems if p.outcome == "failed"}
    assert len(report.problems) >= 250 and report.count("new") >= 240, failed
    assert all(failed.values()), "every problem that did not import has a reason"


def test_check_tasks_marks_degenerate_imports_and_passes_the_shipped_suite(tmp_path: Path) -> None:
    runner = CliRunner()
    root = tmp_path / "root"
    import_checkout(FIXTURES, root, levels=(1,))
    checked = runner.invoke(app, ["--tasks", str(root), "check-tasks", "--suite", "kb/l1", "--json"])
    assert checked.exit_code == 0, checked.output
    verdicts = {row["task_id"]: row for row in json.loads(checked.stdout)}
    assert not verdicts["kb/l1/13_constant_output"]["ok"] and verdicts["kb/l1/1_relu"]["ok"]
    marked = find_task("kb/l1/13_constant_output", tasks_root=root).spec.degenerate or ""
    assert marked.startswith("constant_output") and "kb/l1/13_constant_output" not in [t.id for t in discover(root).tasks]
    listed = runner.invoke(app, ["--tasks", str(root), "list", "--all", "--json"])
    assert any(row["id"] == "kb/l1/13_constant_output" and row["degenerate"] for row in json.loads(listed.stdout))
    # Re-importing an unchanged problem keeps the verdict.
    import_checkout(FIXTURES, root, levels=(1,))
    assert find_task("kb/l1/13_constant_output", tasks_root=root).spec.degenerate == marked
    shipped = runner.invoke(app, ["check-tasks", "--suite", "l1"])
    assert shipped.exit_code == 0, shipped.output


def test_scalar_outputs_integer_outputs_and_group_norms_import_fit_to_grade(kb_task: Callable[[str], Task]) -> None:
    from gym.grading.validation.task_validation import validate_task

    # A loss (one number), an argmax (int64: a float16 computation picking the same indices is right),
    # and a GroupNorm the scaler must leave several channels per group.
    for task_id in ("kb/l1/16_mse_loss", "kb/l1/17_argmax_over_a_dimension", "kb/l2/3_gemm_groupnorm_swish"):
        check = validate_task(kb_task(task_id))
        assert check.ok, check.problems
    norm = kb_task("kb/l2/3_gemm_groupnorm_swish").spec
    assert all(shape["out_features"] >= 2 * 64 for shape in [*norm.shapes.public, *norm.shapes.hidden])
    assert norm.kernelbench is not None and "scaled less" in norm.kernelbench.scaling
    assert [check.kind for check in kb_task("kb/l1/17_argmax_over_a_dimension").spec.contract] == ["bitwise", "nontrivial"]


def test_a_kernelbench_prompt_in_helion_asks_for_format_a(kb_task: Callable[[str], Task]) -> None:
    from gym.tasks.prompt import HELION_EXAMPLE, render_prompt

    prompt = render_prompt(kb_task("kb/l3/1_mlp"), cpu=True, dsl="helion")
    assert HELION_EXAMPLE in prompt and "With Helion, use format (a)" in prompt
