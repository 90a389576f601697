"""Task files are validated strictly, every problem reads `file: key: reason`,
and one broken task never hides the others."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gym.contracts import AllcloseCheck, NontrivialCheck
from gym.errors import TaskLoadError
from gym.tasks.loader import discover, find_task, load_task
from gym.tasks.model import Task

VALID = """\
id = "{id}"
version = 1
title = "Tiny double"
description = "Double a 1-D tensor."
reference = "tinyref:double"
inputs = "tinyref:make_inputs"
params = ["x"]
dtypes = ["float32"]
min_bytes = "2 * N * itemsize"
min_flops = "N"

[shapes]
public = [{{ N = 8 }}, {{ N = 13 }}]
hidden = [{{ N = 5 }}, {{ N = 21 }}]

[[contract]]
kind = "allclose"
rtol = 1e-6

[[contract]]
kind = "nontrivial"
"""

REFERENCE = '''\
"""A tiny reference for loader tests."""
import torch


def double(x):
    return x * 2


def make_inputs(shape, dtype, generator, device):
    return {"x": torch.randn(shape["N"], generator=generator, dtype=dtype, device=device)}
'''


@pytest.fixture
def refs(tmp_path: Path) -> Path:
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / "tinyref.py").write_text(REFERENCE)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    return folder


def make_task(root: Path, task_id: str, text: str | None = None, solution: bool = True) -> Path:
    """Write root/<task_id>/task.toml (the valid template unless `text`) and solution.py."""
    folder = root / task_id
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(VALID.format(id=task_id) if text is None else text)
    if solution:
        (folder / "solution.py").write_text("def kernel(x):\n    return x * 2\n")
    return folder


def variant(task_id: str = "s/t", replace: dict[str, str] | None = None) -> str:
    """The valid template with `old -> new` replacements (each must apply)."""
    text = VALID.format(id=task_id)
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def load_error(root: Path, refs: Path, text: str, task_id: str = "s/t", solution: bool = True) -> tuple[Path, list[tuple[str, str]]]:
    """Load a broken task; check every line reads `<task.toml>: <key>: <reason>`; return (path, [(key, reason)])."""
    folder = make_task(root, task_id, text, solution)
    with pytest.raises(TaskLoadError) as caught:
        load_task(folder, refs, root)
    path = folder / "task.toml"
    lines = str(caught.value).splitlines()
    assert lines
    parsed = []
    for line in lines:
        match = re.fullmatch(re.escape(str(path)) + r": (\S+): (.+)", line)
        assert match, f"not `file: key: reason`: {line!r}"
        parsed.append((match.group(1), match.group(2)))
    return path, parsed


# ----------------------------------------------------------------------------- loading


def test_valid_task_loads(root: Path, refs: Path) -> None:
    folder = make_task(root, "s/t")
    task = load_task(folder, refs, root)
    assert isinstance(task, Task)
    assert task.id == "s/t" and task.suite == "s"
    assert task.folder == folder.resolve() and task.references_dir == refs.resolve()
    assert task.solution_path == folder.resolve() / "solution.py" and task.solution_path.is_file()
    assert task.task_file.is_file()
    spec = task.spec
    assert spec.params == ["x"] and spec.dtypes == ["float32"]
    assert spec.shapes.public == [{"N": 8}, {"N": 13}] and spec.shapes.hidden == [{"N": 5}, {"N": 21}]
    assert spec.shapes.bench == []
    assert isinstance(spec.contract[0], AllcloseCheck) and spec.contract[0].rtol == 1e-6
    assert isinstance(spec.contract[1], NontrivialCheck)
    assert spec.timeout_s > 0 and spec.oracle is None and spec.options == {}


def test_valid_task_loads_without_a_root(root: Path, refs: Path) -> None:
    # Without tasks_root the id is not compared with the folder.
    folder = make_task(root, "s/elsewhere", variant("s/t"))
    assert load_task(folder, refs).id == "s/t"


def test_missing_task_file(root: Path, refs: Path) -> None:
    folder = root / "s" / "t"
    folder.mkdir(parents=True)
    with pytest.raises(TaskLoadError, match=re.escape(f"{folder / 'task.toml'}: (file): not found")):
        load_task(folder, refs, root)


def test_toml_syntax_error(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={"version = 1": "version = = 1"}))
    assert [key for key, _ in errors] == ["(syntax)"]


def test_non_utf8_file(root: Path, refs: Path) -> None:
    folder = make_task(root, "s/t")
    (folder / "task.toml").write_bytes(b'title = "\xff\xfe"\n')
    with pytest.raises(TaskLoadError, match=re.escape(f"{folder / 'task.toml'}: (file): not UTF-8")):
        load_task(folder, refs, root)


@pytest.mark.parametrize(
    ("replace", "key"),
    [
        ({'id = "s/t"': 'id = "s/t"\ncolour = "blue"'}, "colour"),
        ({"hidden = [{ N = 5 }, { N = 21 }]": "hidden = [{ N = 5 }, { N = 21 }]\nextra = []"}, "shapes.extra"),
        ({"rtol = 1e-6": "rtol = 1e-6\nrtoll = 1e-3"}, "contract.0.allclose.rtoll"),
        ({'kind = "nontrivial"': 'kind = "nontrivial"\ncolour = 1'}, "contract.1.nontrivial.colour"),
    ],
)
def test_unknown_key_names_its_path(root: Path, refs: Path, replace: dict[str, str], key: str) -> None:
    _, errors = load_error(root, refs, variant(replace=replace))
    assert errors == [(key, "unknown key")]


def test_missing_required_field(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'title = "Tiny double"\n': ""}))
    assert errors == [("title", "Field required")]


def test_several_problems_give_one_line_each(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={"version = 1": "version = 0", '["float32"]': '["float8"]', 'id = "s/t"': 'id = "s/t"\ncolour = 1'}))
    keys = {key for key, _ in errors}
    assert {"version", "dtypes"} <= keys and len(errors) >= 3


def test_unknown_dtype(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'dtypes = ["float32"]': 'dtypes = ["float32", "float8"]'}))
    assert len(errors) == 1
    key, reason = errors[0]
    assert key == "dtypes" and "unknown dtype 'float8'" in reason and "float32" in reason


def test_unknown_gpu_only_dtype(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'dtypes = ["float32"]': 'dtypes = ["float32"]\ngpu_only_dtypes = ["tf32"]'}))
    assert errors[0][0] == "gpu_only_dtypes" and "tf32" in errors[0][1]


def test_overlapping_dtype_lists(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'dtypes = ["float32"]': 'dtypes = ["float32"]\ngpu_only_dtypes = ["float32"]'}))
    assert "overlap" in errors[0][1] and "float32" in errors[0][1]


def test_unknown_contract_kind(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'kind = "allclose"': 'kind = "closeish"'}))
    assert len(errors) == 1
    key, reason = errors[0]
    assert key.startswith("contract.0") and "closeish" in reason
    assert "allclose" in reason and "batch_invariant" in reason  # the known kinds are listed


def test_contract_parameter_out_of_range(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={"rtol = 1e-6": "rtol = -1.0"}))
    assert errors[0][0] == "contract.0.allclose.rtol"


def test_contract_dtype_the_task_lacks(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={"rtol = 1e-6": 'rtol = 1e-6\ndtypes = ["float16"]'}))
    assert errors[0][0] == "contract.0.dtypes" and "float16" in errors[0][1]


@pytest.mark.parametrize(
    ("shapes", "fragment"),
    [
        ("hidden = [{ M = 5 }]", "hidden[0] has parameters ['M'], expected ['N']"),
        ("hidden = [{ N = 5, K = 2 }]", "hidden[0] has parameters ['K', 'N'], expected ['N']"),
        ("hidden = [{ N = 5 }, { N = 21 }]\nbench = [{ N = 1 }, { n = 1 }]", "bench[1] has parameters ['n'], expected ['N']"),
        # The hidden-shape rule: past the largest public size, and not only powers of two.
        ("hidden = [{ N = 5 }, { N = 11 }]", "no hidden N is larger than the largest public N (13)"),
        ("hidden = [{ N = 4 }, { N = 32 }]", "every hidden N is a power of two"),
        ("hidden = [{ N = 5 }, { N = 11 }]\nexempt = { K = 'no such parameter' }", "exempt names unknown parameters ['K']"),
        ("hidden = [{ N = -5 }]", "hidden[0].N must be >= 0"),
        ("hidden = [{ N = 5.5 }]", "valid integer"),
    ],
)
def test_bad_shape_parameter_sets(root: Path, refs: Path, shapes: str, fragment: str) -> None:
    _, errors = load_error(root, refs, variant(replace={"hidden = [{ N = 5 }, { N = 21 }]": shapes}))
    assert all(key.startswith("shapes") for key, _ in errors)
    assert any(fragment in reason for _, reason in errors)


def test_empty_public_shapes(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={"public = [{ N = 8 }, { N = 13 }]": "public = []"}))
    assert errors[0][0] == "shapes.public"


def test_min_bytes_with_unknown_name(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'min_bytes = "2 * N * itemsize"': 'min_bytes = "2 * N * Q * itemsize"'}))
    assert len(errors) == 1
    key, reason = errors[0]
    assert key == "min_bytes" and "'Q'" in reason


@pytest.mark.parametrize(
    ("replace", "key"),
    [
        ({'min_bytes = "2 * N * itemsize"': 'min_bytes = "2 * N * Q"'}, "min_bytes"),
        ({'params = ["x"]': 'params = ["x", "x"]'}, "params"),
    ],
)
def test_model_level_errors_name_their_field(root: Path, refs: Path, replace: dict[str, str], key: str) -> None:
    _, errors = load_error(root, refs, variant(replace=replace))
    assert errors[0][0] == key


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("len(N)", "Call is not allowed"),
        ("N.bit_length", "Attribute is not allowed"),
        ("'N' * 2", "only numeric constants"),
        ("N +", "not an arithmetic expression"),
    ],
)
def test_min_bytes_rejects_non_arithmetic(root: Path, refs: Path, expr: str, fragment: str) -> None:
    _, errors = load_error(root, refs, variant(replace={'min_bytes = "2 * N * itemsize"': f'min_bytes = "{expr}"'}))
    assert len(errors) == 1
    key, reason = errors[0]
    assert key == "min_bytes" and fragment in reason


def test_min_flops_with_unknown_name(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'min_flops = "N"': 'min_flops = "N * itemsize * M"'}))
    assert errors[0][0] == "min_flops" and "'M'" in errors[0][1]


def test_id_must_match_the_folder(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant("s/other"), task_id="s/t")
    assert errors == [("id", "is 's/other' but the folder says 's/t'")]


def test_id_pattern(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant("S/T-1"), task_id="s/t")
    assert errors[0][0] == "id"


def test_missing_solution(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(), solution=False)
    assert errors == [("(task)", "no solution.py beside the task file")]


@pytest.mark.parametrize(
    ("replace", "key"),
    [
        ({'reference = "tinyref:double"': 'reference = "nomod:double"'}, "reference"),
        ({'inputs = "tinyref:make_inputs"': 'inputs = "nomod:make_inputs"'}, "inputs"),
        ({'params = ["x"]': 'params = ["x"]\noracle = "nomod:double"'}, "oracle"),
    ],
)
def test_missing_reference_module(root: Path, refs: Path, replace: dict[str, str], key: str) -> None:
    _, errors = load_error(root, refs, variant(replace=replace))
    assert len(errors) == 1
    assert errors[0][0] == key and "nomod.py" in errors[0][1] and str(refs) in errors[0][1]


def test_reference_with_a_path_is_rejected(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'reference = "tinyref:double"': 'reference = "../tinyref:double"'}))
    assert errors[0][0] == "reference"


def test_duplicate_params(root: Path, refs: Path) -> None:
    _, errors = load_error(root, refs, variant(replace={'params = ["x"]': 'params = ["x", "y", "x"]'}))
    assert len(errors) == 1 and "duplicates" in errors[0][1]


# ------------------------------------------------------------------ discover / find_task


def test_discover_skips_a_broken_task(root: Path, refs: Path) -> None:
    make_task(root, "s/alpha")
    make_task(root, "s/beta")
    broken = make_task(root, "s/broken", variant("s/broken", replace={"version = 1": 'version = "one"'}))
    report = discover(root, refs)
    assert sorted(task.id for task in report.tasks) == ["s/alpha", "s/beta"]
    assert len(report.errors) == 1
    assert report.errors[0].startswith(f"{broken / 'task.toml'}: version: ")


def test_discover_suite_filter(root: Path, refs: Path) -> None:
    make_task(root, "s/alpha")
    make_task(root, "s/beta")
    make_task(root, "u/gamma")
    make_task(root, "u/broken", "id = ")
    assert [task.id for task in discover(root, refs, suite="u").tasks] == ["u/gamma"]
    assert len(discover(root, refs, suite="u").errors) == 1
    only_s = discover(root, refs, suite="s")
    assert [task.id for task in only_s.tasks] == ["s/alpha", "s/beta"] and only_s.errors == []
    assert discover(root, refs, suite="none").tasks == []


def test_discover_missing_root(tmp_path: Path, refs: Path) -> None:
    report = discover(tmp_path / "nowhere", refs)
    assert report.tasks == [] and len(report.errors) == 1 and "(folder)" in report.errors[0]


def test_find_task(root: Path, refs: Path) -> None:
    make_task(root, "s/alpha")
    make_task(root, "u/gamma")
    assert find_task("u/gamma", root, refs).id == "u/gamma"
    with pytest.raises(TaskLoadError) as caught:
        find_task("s/nope", root, refs)
    message = str(caught.value)
    assert message.startswith("s/nope: no such task")
    assert "s/alpha" in message and "u/gamma" in message


@pytest.mark.parametrize("task_id", ["alpha", "s/../s/alpha", "../tasks/s/alpha"])
def test_find_task_rejects_odd_ids(root: Path, refs: Path, task_id: str) -> None:
    make_task(root, "s/alpha")
    with pytest.raises(TaskLoadError, match="no such task"):
        find_task(task_id, root, refs)


def test_find_task_on_an_empty_root(root: Path, refs: Path) -> None:
    with pytest.raises(TaskLoadError, match=r"known: none"):
        find_task("s/t", root, refs)


def test_every_dtype_needs_a_value_check(root: Path, refs: Path) -> None:
    # Scoping the only value check to float32 leaves the GPU-only bfloat16 variant judged by nothing.
    text = variant(
        replace={
            'dtypes = ["float32"]\n': 'dtypes = ["float32"]\ngpu_only_dtypes = ["bfloat16"]\n',
            "rtol = 1e-6": 'rtol = 1e-6\ndtypes = ["float32"]',
        }
    )
    _, errors = load_error(root, refs, text)
    key, reason = errors[0]
    assert key == "contract" and "bfloat16" in reason


def test_an_exempt_parameter_skips_the_hidden_shape_rule_with_its_reason(root: Path, refs: Path) -> None:
    from gym.tasks.model import ShapeSets, hidden_shape_problems

    shapes = ShapeSets(public=[{"N": 64}], hidden=[{"N": 32}], exempt={"N": "the op is defined for powers of two only"})
    assert hidden_shape_problems(shapes) == []
    with pytest.raises(ValueError, match="no hidden N is larger"):
        ShapeSets(public=[{"N": 64}], hidden=[{"N": 32}])
