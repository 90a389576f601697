"""The prompt names every argument of an imported reference's torch call, with a one-line meaning, and
states each tensor input's layout (gym.tasks.prompt_args); `show` warns about a degenerate task.

Fixtures are problem sources written here (the importers' own tests cover what they write)."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gym.cli import app
from gym.tasks.loader import find_task
from gym.tasks.prompt import render_prompt
from gym.tasks.prompt_args import call_lines, describe_calls, describe_layout, differentiates


def _problem(forward: str, params: str = "x, y, z, w, u", inputs: str = "return [torch.rand((s0,)) for _ in range(5)]") -> str:
    body = textwrap.indent(inputs, "    ")
    return (
        "import torch\nimport torch.nn as nn\n\ns0 = 8\n\n\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n\n"
        f"    def forward(self, {params}):\n        return {forward}\n\n\n"
        f"def get_inputs():\n{body}\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )


def _by_name(source: str) -> dict[str, tuple[str | None, str, str]]:
    (call,) = describe_calls(source)
    return {arg.name: (arg.value, arg.type, arg.meaning) for arg in call.args}


def test_an_aten_overload_call_gets_its_schema_names_and_meanings() -> None:
    source = _problem("torch.ops.aten.native_batch_norm.default(x, y, z, w, u, False, 0.1, 1e-05)")
    (call,) = describe_calls(source)
    assert call.op == "aten.native_batch_norm.default"
    assert call.signature.startswith("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean")
    assert call.description and "batch normalisation" in call.description
    args = {arg.name: arg for arg in call.args}
    assert [arg.name for arg in call.args] == ["input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps"]
    assert (args["weight"].value, args["running_var"].value, args["training"].value, args["eps"].value) == ("y", "u", "False", "1e-05")
    assert "scale" in args["weight"].meaning and "variance" in args["eps"].meaning and "running_mean" in args["training"].meaning
    assert call.returns and "save_invstd" in call.returns
    text = "\n".join(call_lines([call]))
    assert "- `running_var` = `u` (Tensor?): per-channel running variance" in text
    assert "- `momentum` = `0.1` (float):" in text


def test_a_torch_function_binds_to_the_overload_its_arguments_fit() -> None:
    # torch.sum(x, dim=..., keepdim=...) is sum.dim_IntList, and its `self` is the docs' `input`.
    args = _by_name(_problem("torch.sum(x, dim=[1], keepdim=True)", params="x"))
    assert list(args) == ["input", "dim", "keepdim", "dtype"]
    assert args["dim"][:2] == ("[1]", "int[1]?") and "reduce" in args["dim"][2]
    assert args["dtype"][0] is None  # the default applies, and the line says so
    # torch.searchsorted's schema calls the searched values `self`: the docs' name, `values`, is shown.
    search = _by_name(_problem("torch.searchsorted(x, y, right=True, sorter=z)", params="x, y, z"))
    assert list(search)[:2] == ["sorted_sequence", "values"] and search["sorter"][0] == "z"
    assert "sort" in search["sorter"][2]
    # A Scalar overload for a number: pow.Tensor_Scalar, its exponent a Scalar; its base the input (not the
    # docs' scalar-`self` overload).
    (call,) = describe_calls(_problem("torch.ops.aten.pow.Tensor_Scalar(x, 2)", params="x"))
    assert call.args[0].meaning == "the input tensor" and call.args[1].type == "Scalar"


def test_a_named_overload_takes_a_number_for_a_tensor() -> None:
    (call,) = describe_calls(_problem("torch.ops.aten.mul.Tensor(x, 0.5)", params="x"))
    assert [(arg.name, arg.value) for arg in call.args] == [("self", "x"), ("other", "0.5")]


def test_a_python_torch_function_uses_its_own_signature() -> None:
    # F.batch_norm's order (running stats before weight) is not aten.batch_norm's.
    args = _by_name(_problem("torch.nn.functional.batch_norm(x, y, z, w, u, training=False, momentum=-1.0, eps=0.5)"))
    assert [(name, value[0]) for name, value in args.items()][:5] == [
        ("input", "x"),
        ("running_mean", "y"),
        ("running_var", "z"),
        ("weight", "w"),
        ("bias", "u"),
    ]
    assert args["eps"][0] == "0.5" and "square root" in args["eps"][2]


def test_every_call_of_the_forward_is_described_once() -> None:
    source = _problem("torch.ops.aten.add.Tensor(torch.ops.aten.mm.default(x, y), z) + torch.ops.aten.mm.default(x, y)", params="x, y, z")
    calls = describe_calls(source)
    assert [call.op for call in calls] == ["aten.add.Tensor", "aten.mm.default"]
    assert calls[1].args[1].meaning == "the right matrix (k, m)"
    # get_inputs' own torch calls (the input draws) are not part of the op.
    assert all("rand" not in call.text for call in calls)


@pytest.mark.parametrize(
    ("call", "params", "op", "names"),
    [
        # torch.special / torch.linalg functions are aten special_* / linalg_* ops, documented under their module
        # (the schema's `self` shown under the docs' name: linalg.vector_norm documents it as `x`).
        ("torch.special.zeta(x, y)", "x, y", "aten.special_zeta.default", ["input", "other"]),
        ("torch.linalg.vector_norm(x, ord=6)", "x", "aten.linalg_vector_norm.default", ["x", "ord", "dim", "keepdim", "dtype"]),
        # A keyword only the Python function takes is listed as such.
        ("torch.nonzero(x, as_tuple=False)", "x", "aten.nonzero.default", ["input", "as_tuple"]),
        # Variadic tensors, and a boolean_dispatch function (its wrapped function's signature).
        ("torch.block_diag(x, y, z)", "x, y, z", "torch.block_diag", ["*tensors"]),
        (
            "torch.nn.functional.max_pool2d(x, kernel_size=3, stride=2, return_indices=True)",
            "x",
            "torch.nn.functional.max_pool2d",
            ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
        ),
        # The OpInfo importer's spelling of an aten overload it names.
        ("torch.torch.ops.aten._safe_softmax.default(x, dim=1)", "x", "aten._safe_softmax.default", ["self", "dim", "dtype"]),
    ],
)
def test_torch_calls_of_every_spelling_bind(call: str, params: str, op: str, names: list[str]) -> None:
    (described,) = describe_calls(_problem(call, params=params))
    assert described.op == op and [arg.name for arg in described.args] == names
    assert described.description and all(arg.meaning for arg in described.args)
    assert "**" not in described.description and "\\" not in described.description


def test_a_fusion_forward_describes_its_ops_not_its_views_or_autograd() -> None:
    # As the models importer writes a fusion (or its backward): the model's views replayed, then the ops.
    source = _problem("v3", params="x, w, b").replace(
        "        return v3\n",
        "        with torch.enable_grad():\n"
        "            x = x.detach().requires_grad_()\n"
        "            v1 = torch.ops.aten.t.default(w)\n"
        "            v2 = torch.ops.aten.addmm.default(b, x, v1)\n"
        "            v3 = torch.ops.aten.gelu.default(v2, approximate='tanh')\n"
        "            return torch.autograd.grad((v3,), (x,), (v3,))\n",
    )
    calls = describe_calls(source)
    assert [call.op for call in calls] == ["aten.addmm.default", "aten.gelu.default"]
    addmm = {arg.name: arg for arg in calls[0].args}
    assert addmm["mat2"].value == "v1" and addmm["self"].meaning.startswith("the term added to the product")
    assert calls[1].args[1].value == "'tanh'" and "tanh approximation" in calls[1].args[1].meaning
    # One op called several times is one entry: its meanings once, then each call's arguments.
    text = "\n".join(call_lines(calls, backward=differentiates(source)))
    assert "the reference returns their backward: `torch.autograd.grad`" in text
    many = describe_calls(_problem("torch.ops.aten.mul.Tensor(torch.ops.aten.mul.Tensor(x, 0.5), x)", params="x"))
    grouped = "\n".join(call_lines(many))
    assert "`mul.Tensor(Tensor self, Tensor other) -> Tensor`: elementwise product `self * other`, broadcast. Called 2 times:" in grouped
    assert "- `torch.ops.aten.mul.Tensor(x, 0.5)`: self=`x`, other=`0.5`" in grouped
    assert grouped.count("- `other` (Tensor):") == 1 and "backward" not in grouped
    # A forward that is only plumbing is still described.
    (view,) = describe_calls(_problem("torch.ops.aten.t.default(x)", params="x"))
    assert view.op == "aten.t.default"


def test_layouts_in_words() -> None:
    assert describe_layout(torch.empty(4, 5)) == "contiguous"
    transposed = describe_layout(torch.empty(11, 4).t())
    assert transposed.startswith("strides (1, 4): not contiguous, the transpose of a contiguous [11, 4] tensor")
    assert "permute" in describe_layout(torch.empty(2, 3, 4).permute(2, 0, 1))
    assert describe_layout(torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)).startswith("channels-last")
    assert "broadcast" in describe_layout(torch.empty(3, 1).expand(3, 4))
    assert "strided view" in describe_layout(torch.empty(6, 8)[:, ::2])


NORM_PROBLEM = _problem(
    "torch.ops.aten.native_batch_norm.default(x, y, z, w, u, False, 0.1, 1e-05)",
    inputs=(
        "x = torch.rand((2, s0, 3, 3))\n"
        "y = torch.rand((s0,))\n"
        "z = torch.rand((s0,))\n"
        "w = torch.rand((s0,))\n"
        "u = torch.rand((s0,)) + 0.5\n"
        "return [x, y, z, w, u]"
    ),
)


def write_task(root: Path, task_id: str, source: str, degenerate: str | None = None) -> Path:
    """A KernelBench-format task folder holding `source` (an imported task, written by hand)."""
    folder = root / task_id
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(source)
    sha = hashlib.sha256(source.encode()).hexdigest()
    header = f'degenerate = "{degenerate}"\n' if degenerate else ""
    (folder / "task.toml").write_text(
        header
        + textwrap.dedent(
            f'''
            id = "{task_id}"
            version = 1
            title = "a batch norm"
            description = "Implement Model.forward."
            params = ["x", "y", "z", "w", "u"]
            dtypes = ["float32"]
            min_bytes = "0"
            min_flops = "0"
            contract = [{{ kind = "allclose", rtol = 0.01, atol = 0.01 }}]

            [shapes]
            public = [{{ s0 = 4 }}]
            hidden = [{{ s0 = 6 }}]

            [kernelbench]
            level = 1
            problem_file = "problem.py"
            source_path = "fixture/problem.py"
            checkout = "fixture"
            sha256 = "{sha}"
            importer_version = 1
            forward_inputs = ["x", "y", "z", "w", "u"]
            '''
        )
    )
    return folder


def test_an_imported_tasks_prompt_names_the_arguments_and_layouts(tmp_path: Path) -> None:
    write_task(tmp_path, "models/fixture/native_batch_norm_1", NORM_PROBLEM)
    prompt = render_prompt(find_task("models/fixture/native_batch_norm_1", tasks_root=tmp_path), cpu=False)
    assert "- `x`: tensor float32 [2, 4, 3, 3], contiguous" in prompt
    assert "- every tensor argument arrives contiguous (row-major)" in prompt
    assert "## The op, argument by argument" in prompt
    assert "`torch.ops.aten.native_batch_norm.default(x, y, z, w, u, False, 0.1, 1e-05)` is `native_batch_norm(" in prompt
    assert "- `training` = `False` (bool): True: normalise with the batch's own" in prompt
    assert prompt.index("For public shape") < prompt.index("## The op, argument by argument") < prompt.index("## Shapes")


def test_show_warns_about_a_degenerate_task(tmp_path: Path) -> None:
    runner = CliRunner()
    write_task(tmp_path, "models/fixture/ok_1", NORM_PROBLEM)
    write_task(tmp_path, "models/fixture/flat_1", NORM_PROBLEM, degenerate="constant_output: the output does not depend on the inputs")
    shown = runner.invoke(app, ["--tasks", str(tmp_path), "show", "models/fixture/flat_1"])
    assert shown.exit_code == 0, shown.output
    assert "warning: models/fixture/flat_1 is marked degenerate" in shown.stderr and "constant_output" in shown.stderr
    assert "warning" not in shown.stdout and "## The op, argument by argument" in shown.stdout
    clean = runner.invoke(app, ["--tasks", str(tmp_path), "show", "models/fixture/ok_1"])
    assert clean.exit_code == 0 and "degenerate" not in clean.stderr


@pytest.mark.parametrize("degenerate", [None, "constant_output: the output does not depend on the inputs"])
def test_grade_warns_about_a_degenerate_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, degenerate: str | None) -> None:
    from gym.execution.local import LocalExecutor
    from gym.schema.result import Status
    from tests.support.fake_grades import fake_grade

    write_task(tmp_path, "models/fixture/bn_1", NORM_PROBLEM, degenerate=degenerate)
    found_at_grade = "nontrivial failed on float32 public #1" if degenerate else None

    def grade(self: LocalExecutor, task: str, file: Path, options: object, keep_job: Path | None = None, secret: int | None = None) -> object:
        result = fake_grade(task, "code", Status.infra_error if found_at_grade else Status.wrong_answer)
        return result.model_copy(update={"degenerate_task": found_at_grade})

    monkeypatch.setattr(LocalExecutor, "grade", grade)
    submission = tmp_path / "kernel.py"
    submission.write_text("def kernel(x, y, z, w, u):\n    return x\n")
    graded = CliRunner().invoke(app, ["--tasks", str(tmp_path), "grade", "models/fixture/bn_1", str(submission), "--json"])
    assert graded.exit_code == 1
    assert graded.stdout.lstrip().startswith("{")  # --json keeps stdout machine-readable
    if degenerate:
        assert "is marked degenerate by `kgym check-tasks`: constant_output" in graded.stderr
        assert "the grade found models/fixture/bn_1 degenerate (nontrivial failed" in graded.stderr
    else:
        assert "degenerate" not in graded.stderr
