"""`kgym check-tasks` (gym.grading.validation.task_validation): every shipped task is fit to grade, and each kind of
broken task (built here for real: task folders, references, KernelBench problems) is caught
with its named reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from gym.grading.validation.task_validation import (
    CONSTANT_ALONG_AXIS,
    CONSTANT_OUTPUT,
    FLOAT16_REFERENCE_PASSES,
    HIDDEN_SHAPE_RULE,
    IGNORES_WEIGHTS,
    NONDETERMINISTIC_REFERENCE,
    NONTRIVIAL_SELF_CHECK,
    OUTPUT_RANGE_NEAR_ZERO,
    OUTPUT_STD_NEAR_ZERO,
    REASONS,
    REFERENCE_ERROR,
    TOO_LARGE,
    TRIVIAL_ANSWER_PASSES,
    TaskCheck,
    validate_task,
    validate_tasks,
)
from gym.tasks.kernelbench.importer import import_checkout
from gym.tasks.loader import discover, load_task
from gym.tasks.model import ShapeCost, ShapeSets, Task

FIXTURES = Path(__file__).parent.parent / "tasks" / "kernelbench" / "fixtures"

SHIPPED = {task.id: task for task in discover().tasks}

# Shipped tasks with a finding the task means to have, each with why. A finding that goes away
# (or a new one) fails the test, so this list stays exact.
# Findings a shipped task has on purpose, declared in its task file (`validation_exempt`).
KNOWN_FINDINGS: dict[str, set[str]] = {
    # "Ranking-graded, low precision allowed": its contract admits fp16 and FP8 kernels by design,
    # and the float16 reference ranks exactly like the float32 one (top-10 overlap 1.000).
    "l1/retrieval_scores": {FLOAT16_REFERENCE_PASSES},
}


def reasons(check: TaskCheck) -> set[str]:
    return {problem.reason for problem in check.problems}


def shown(check: TaskCheck) -> str:
    return "\n".join(f"{problem.reason}: {problem.detail}" for problem in check.problems)


# ----------------------------------------------------------------------------- the shipped suite


@pytest.mark.parametrize("task_id", sorted(SHIPPED))
def test_shipped_task_is_fit(task_id: str) -> None:
    check = validate_task(SHIPPED[task_id])
    assert check.task_id == task_id and check.version == SHIPPED[task_id].spec.version
    assert check.seconds > 0
    known = KNOWN_FINDINGS.get(task_id, set())
    assert reasons(check) == set(), shown(check)
    assert check.ok
    assert {problem.reason for problem in check.exempted} == known


def test_validate_tasks_reports_each_as_it_finishes() -> None:
    tasks = [SHIPPED["l1/vector_add"], SHIPPED["l1/row_sum"]]
    heard: list[str] = []
    threads = torch.get_num_threads()
    results = validate_tasks(tasks, on_done=lambda check: heard.append(check.task_id))
    assert torch.get_num_threads() == threads  # one thread while it ran, torch's setting restored
    assert heard == [task.id for task in tasks] == [result.task_id for result in results]
    assert all(result.ok and not result.problems for result in results)
    assert TaskCheck.model_validate_json(results[0].model_dump_json()) == results[0]


# ----------------------------------------------------------------------------- broken tasks

REFERENCES = '''\
"""Broken references for check-tasks tests."""
import torch


def make_inputs(shape, dtype, generator, device):
    return {"x": torch.randn(shape["N"], generator=generator, dtype=dtype, device=device)}


def make_matmul_inputs(shape, dtype, generator, device):
    a = torch.randn(shape["M"], shape["K"], generator=generator, dtype=dtype, device=device)
    b = torch.randn(shape["K"], shape["N"], generator=generator, dtype=dtype, device=device)
    return {"a": a, "b": b}


def double(x):
    return x * 2


def constant(x):
    return torch.full_like(x, 1.5)


def noisy(x):
    return x * 2 + torch.rand(x.shape, dtype=x.dtype) * 1e-3


def tiny(x):
    return x * 1e-3


def fragile(x):
    if x.shape[0] == 21:
        raise ValueError("no N = 21 here")
    return x * 2


CALLS = [0]


def flaky(x):
    CALLS[0] += 1
    if CALLS[0] == 2:
        raise RuntimeError("second call refused")
    return x * 2


def matmul(a, b):
    return a @ b


def flat(x):
    return x * 1e-7


def barely_varying(x):
    return 1000.0 + x * 0.02


def rows_alike(a, b):
    return (a @ b).mean(0, keepdim=True).expand(a.shape[0], b.shape[1]).contiguous()
'''

VECTOR_TASK = """\
id = "{id}"
version = 1
title = "Broken {name}"
description = "A deliberately broken task."
reference = "brokenref:{reference}"
inputs = "brokenref:make_inputs"
params = ["x"]
dtypes = ["float32"]
min_bytes = "2 * N * itemsize"
min_flops = "N"

[shapes]
public = [{{ N = 8 }}, {{ N = 13 }}]
hidden = [{{ N = 5 }}, {{ N = 21 }}]

[[contract]]
kind = "allclose"
rtol = {rtol}
atol = {atol}

[[contract]]
kind = "nontrivial"
"""

MATMUL_TASK = """\
id = "{id}"
version = 1
title = "Loose matmul"
description = "A matmul with a contract too loose to see float16."
reference = "brokenref:matmul"
inputs = "brokenref:make_matmul_inputs"
params = ["a", "b"]
dtypes = ["float32"]
min_bytes = "(M * K + K * N + M * N) * itemsize"
min_flops = "2 * M * N * K"

[shapes]
public = [{{ M = 8, N = 8, K = 16 }}, {{ M = 12, N = 10, K = 16 }}]
hidden = [{{ M = 13, N = 11, K = 17 }}, {{ M = 3, N = 5, K = 7 }}]

[[contract]]
kind = "allclose"
rtol = 1e-2
atol = 1e-2

[[contract]]
kind = "nontrivial"
"""


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    """Task folders under tmp/tasks/broken/<name>, references in tmp/refs, loaded as the loader loads them."""
    base = tmp_path_factory.mktemp("broken")
    refs, root = base / "refs", base / "tasks"
    refs.mkdir()
    (refs / "brokenref.py").write_text(REFERENCES)
    documents = {
        "healthy": VECTOR_TASK.format(id="broken/healthy", name="healthy", reference="double", rtol="1e-6", atol="1e-6"),
        "constant": VECTOR_TASK.format(id="broken/constant", name="constant", reference="constant", rtol="1e-6", atol="1e-6"),
        "noisy": VECTOR_TASK.format(id="broken/noisy", name="noisy", reference="noisy", rtol="1e-6", atol="1e-6"),
        "loose": VECTOR_TASK.format(id="broken/loose", name="loose", reference="tiny", rtol="0.0", atol="1.0"),
        "fragile": VECTOR_TASK.format(id="broken/fragile", name="fragile", reference="fragile", rtol="1e-6", atol="1e-6"),
        "flaky": VECTOR_TASK.format(id="broken/flaky", name="flaky", reference="flaky", rtol="1e-6", atol="1e-6"),
        "matmul": MATMUL_TASK.format(id="broken/matmul"),
        "flat": VECTOR_TASK.format(id="broken/flat", name="flat", reference="flat", rtol="1e-6", atol="1e-9"),
        "barely": VECTOR_TASK.format(id="broken/barely", name="barely", reference="barely_varying", rtol="1e-7", atol="1e-7"),
        "rows": MATMUL_TASK.format(id="broken/rows").replace("brokenref:matmul", "brokenref:rows_alike").replace("1e-2", "1e-5"),
    }
    tasks = {}
    for name, document in documents.items():
        folder = root / "broken" / name
        folder.mkdir(parents=True)
        (folder / "task.toml").write_text(document)
        (folder / "solution.py").write_text("def kernel(*args):\n    raise NotImplementedError\n")
        tasks[name] = load_task(folder, references_dir=refs, tasks_root=root)
    return tasks


def test_a_healthy_task_passes(broken: dict[str, Task]) -> None:
    check = validate_task(broken["healthy"])
    assert check.ok and not check.problems, shown(check)


def test_constant_output_is_caught(broken: dict[str, Task]) -> None:
    check = validate_task(broken["constant"])
    assert not check.ok
    assert CONSTANT_OUTPUT in reasons(check), shown(check)
    # A constant is also a trivial answer the contract lets through.
    assert {TRIVIAL_ANSWER_PASSES, NONTRIVIAL_SELF_CHECK} <= reasons(check)


def test_nondeterministic_reference_is_caught(broken: dict[str, Task]) -> None:
    check = validate_task(broken["noisy"])
    assert reasons(check) == {NONDETERMINISTIC_REFERENCE}, shown(check)
    assert "element(s) differ" in check.problems[0].detail


def test_loose_contract_lets_zeros_through(broken: dict[str, Task]) -> None:
    check = validate_task(broken["loose"])
    assert TRIVIAL_ANSWER_PASSES in reasons(check), shown(check)
    detail = next(problem.detail for problem in check.problems if problem.reason == TRIVIAL_ANSWER_PASSES)
    assert "zeros" in detail and "float32 public #1 {N=8}" in detail


def test_float16_reference_passes_a_loose_contract(broken: dict[str, Task]) -> None:
    check = validate_task(broken["matmul"])
    assert reasons(check) == {FLOAT16_REFERENCE_PASSES}, shown(check)


def test_reference_error_names_the_shape_and_stops(broken: dict[str, Task]) -> None:
    check = validate_task(broken["fragile"])
    assert reasons(check) == {REFERENCE_ERROR}, shown(check)
    (problem,) = check.problems
    assert "hidden #2 {N=21}" in problem.detail and "ValueError: no N = 21 here" in problem.detail


def test_an_exception_inside_a_check_is_that_checks_problem(broken: dict[str, Task]) -> None:
    # The reference refuses its second call in this process: the determinism check's rerun.
    check = validate_task(broken["flaky"])
    assert reasons(check) == {NONDETERMINISTIC_REFERENCE}, shown(check)
    assert "the check raised RuntimeError: second call refused" in check.problems[0].detail


def test_hidden_shape_rule_is_checked_again(broken: dict[str, Task]) -> None:
    task = broken["healthy"]
    # The loader refuses such shapes; a Task built without validation must not slip through.
    shapes = ShapeSets.model_construct(public=[{"N": 8}, {"N": 13}], hidden=[{"N": 5}, {"N": 8}], bench=[], exempt={})
    weak = task.model_copy(update={"spec": task.spec.model_copy(update={"shapes": shapes})})
    check = validate_task(weak)
    assert reasons(check) == {HIDDEN_SHAPE_RULE}, shown(check)
    assert "no hidden N is larger than the largest public N (13)" in check.problems[0].detail


def test_the_nan_answer_spoils_one_element_of_each_floating_output_only() -> None:
    from gym.grading.validation.task_validation import _nan_answers

    values, counts, grid = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4, 5]), torch.ones(2, 3).t()
    (label, (spoiled_values, same_counts, spoiled_grid)), *rest = _nan_answers([values, counts, grid]).items()
    assert not rest and "NaN" in label
    assert torch.isnan(spoiled_values[0]) and torch.equal(spoiled_values[1:], values[1:])
    assert torch.equal(same_counts, counts)
    assert torch.isnan(spoiled_grid[0, 0]) and int(torch.isnan(spoiled_grid).sum()) == 1  # a transposed (strided) output too
    assert torch.equal(values, torch.tensor([1.0, 2.0, 3.0]))  # the expected outputs are left alone
    # Nothing floating, or a first element already NaN: no answer to try.
    assert _nan_answers([counts]) == {} and _nan_answers([torch.tensor([float("nan"), 1.0])]) == {}


def test_flat_outputs_are_caught(broken: dict[str, Task]) -> None:
    check = validate_task(broken["flat"])
    assert OUTPUT_RANGE_NEAR_ZERO in reasons(check), shown(check)
    assert OUTPUT_STD_NEAR_ZERO not in reasons(check)  # said once, as the range
    assert "span" in check.problems[0].detail or any("span" in problem.detail for problem in check.problems)


def test_outputs_that_barely_vary_around_their_mean_are_caught(broken: dict[str, Task]) -> None:
    check = validate_task(broken["barely"])
    assert reasons(check) >= {OUTPUT_STD_NEAR_ZERO}, shown(check)
    assert OUTPUT_RANGE_NEAR_ZERO not in reasons(check)


def test_an_output_that_does_not_vary_along_an_axis_is_caught(broken: dict[str, Task]) -> None:
    check = validate_task(broken["rows"])
    assert reasons(check) == {CONSTANT_ALONG_AXIS}, shown(check)
    assert "along axis 0" in check.problems[0].detail


def test_reasons_are_the_documented_ones() -> None:
    assert set(REASONS) == {
        "reference_error",
        "degenerate_dimension",
        "out_of_bounds_read",
        "nondeterministic_reference",
        "constant_output",
        "output_range_near_zero",
        "output_std_near_zero",
        "constant_along_axis",
        "ignores_weights",
        "trivial_answer_passes",
        "float16_reference_passes",
        "nontrivial_self_check",
        "hidden_shape_rule",
        "too_large",
        "stages_broken",
    }


# ----------------------------------------------------------------------------- KernelBench tasks

IGNORES_WEIGHTS_PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer that forward never uses: y = 2 x."""

    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


batch_size = 64
features = 128


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
'''


BARELY_USES_WEIGHTS_PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """A layer norm whose affine part is scaled away: y = 2 x + 1e-9 * layer_norm(x)."""

    def __init__(self, features: int):
        super().__init__()
        self.norm = nn.LayerNorm(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1e-9 * self.norm(x)


batch_size = 64
features = 128


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
'''


@pytest.fixture(scope="module")
def kernelbench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    """The fixture checkout imported into a fresh root, plus one crafted problem, loaded by discover()."""
    base = tmp_path_factory.mktemp("kb")
    root = base / "root"
    report = import_checkout(FIXTURES, out=root)
    assert not report.count("failed"), report
    crafted = base / "crafted" / "KernelBench" / "level1"
    crafted.mkdir(parents=True)
    (crafted / "1_X.py").write_text(textwrap.dedent(IGNORES_WEIGHTS_PROBLEM))
    (crafted / "2_Y.py").write_text(textwrap.dedent(BARELY_USES_WEIGHTS_PROBLEM))
    crafted_root = base / "crafted_root"
    assert not import_checkout(base / "crafted", out=crafted_root).count("failed")
    loaded = discover(root)
    assert not loaded.errors, loaded.errors
    extra = discover(crafted_root)
    assert not extra.errors, extra.errors
    return {task.id: task for task in [*loaded.tasks, *extra.tasks]}


@pytest.mark.parametrize("task_id", ["kb/l1/1_relu", "kb/l1/4_linear", "kb/l1/11_layernorm"])
def test_kernelbench_tasks_are_fit(kernelbench: dict[str, Task], task_id: str) -> None:
    check = validate_task(kernelbench[task_id])
    assert check.ok and not check.problems, shown(check)


def test_kernelbench_constant_output_is_caught(kernelbench: dict[str, Task]) -> None:
    check = validate_task(kernelbench["kb/l1/13_constant_output"])
    assert not check.ok
    assert reasons(check) & {CONSTANT_OUTPUT, TRIVIAL_ANSWER_PASSES}, shown(check)


def test_kernelbench_model_that_ignores_its_weights(kernelbench: dict[str, Task]) -> None:
    task = kernelbench["kb/l1/1_x"]
    assert task.spec.kernelbench is not None and task.spec.kernelbench.state
    check = validate_task(task)
    assert reasons(check) == {IGNORES_WEIGHTS}, shown(check)
    assert "linear_weight" in check.problems[0].detail


def test_kernelbench_model_whose_weights_the_contract_cannot_see(kernelbench: dict[str, Task]) -> None:
    # LayerNorm's weights start as ones and zeros whatever the seed: only re-initialising them shows
    # that the outputs move by less than the contract's tolerance.
    check = validate_task(kernelbench["kb/l1/2_y"])
    assert reasons(check) == {IGNORES_WEIGHTS}, shown(check)
    assert "re-initialised" in check.problems[0].detail and "still pass every value check" in check.problems[0].detail


def test_kernelbench_bench_shape_too_large_for_a_gpu(kernelbench: dict[str, Task]) -> None:
    task = kernelbench["kb/l1/1_relu"]
    source = task.spec.kernelbench
    assert source is not None and task.spec.shapes.bench
    bench = task.spec.shapes.bench[0]
    cost = [entry if entry.shape != bench else ShapeCost(shape=bench, bytes=80 << 30, flops=entry.flops) for entry in source.cost]
    spec = task.spec.model_copy(update={"kernelbench": source.model_copy(update={"cost": cost})})
    check = validate_task(task.model_copy(update={"spec": spec}))
    assert reasons(check) == {TOO_LARGE}, shown(check)
    assert "bench #1" in check.problems[0].detail and "80.0 GiB" in check.problems[0].detail


# ---------------------------------------------------------------- a task degenerate only under a grade's secret draws


def test_a_nontrivial_check_failing_only_under_other_seeds_is_named(broken: dict[str, Task], monkeypatch: pytest.MonkeyPatch) -> None:
    """A grade draws its inputs from a secret seed: check-tasks runs the `nontrivial` self-check on other
    seeds' inputs too, so a task a grade would find degenerate (infra_error, masked) is named here first."""
    import gym.grading.validation.task_validation as validation

    assert validate_task(broken["healthy"]).ok
    task = broken["healthy"]

    def zeros_elsewhere(task_: Task, trial: object, number: int, device: torch.device) -> dict[str, object]:
        # Under any other seed the inputs are zeros: 2 * 0 = 0, so the trivial answer "zeros" passes there.
        return {"x": torch.zeros(trial.shape["N"], dtype=trial.dtype, device=device)}  # type: ignore[attr-defined]

    monkeypatch.setattr(validation, "_alternate_inputs", zeros_elsewhere)
    check = validate_task(task)
    assert not check.ok
    problem = next(problem for problem in check.problems if problem.reason == NONTRIVIAL_SELF_CHECK)
    assert "another seed" in problem.detail and "zeros" in problem.detail


def test_degenerate_at_grade_names_each_failed_task_self_check() -> None:
    from gym.grading.validation.task_validation import TASK_BLAMED_KINDS, degenerate_at_grade
    from gym.schema.outcomes import CheckOutcome
    from gym.schema.result import TrialResult

    assert TASK_BLAMED_KINDS == {"nontrivial"}

    def trial(label: str, nontrivial_passed: bool, allclose_passed: bool = True) -> TrialResult:
        checks = [
            CheckOutcome(kind="allclose", passed=allclose_passed, message="values"),
            CheckOutcome(kind="nontrivial", passed=nontrivial_passed, message="the task's inputs do not separate the right answer from: zeros"),
        ]
        return TrialResult(label=label, dtype="float32", shape=None, hidden=True, passed=False, checks=checks)

    assert degenerate_at_grade([trial("float32 public #1", True, False)]) is None  # a wrong answer is the submission's
    reason = degenerate_at_grade([trial("float32 public #1", True), trial("hidden", False)])
    assert reason == "hidden: nontrivial: the task's inputs do not separate the right answer from: zeros"
