"""The adversarial corpus (tests/adversarial/): no hostile submission may pass.

Each file is graded against every task it applies to with the full grader
(static audit on); files marked `runtime: yes` are graded again with the audit
off, on their first task, to prove the runtime defences stop them on their own.
The late calls (a couple of hundred more checked calls per grade) only add
checks, so they run only for the tricks whose defence they are
(`late_calls: yes`): every other trick is stopped without them, which is the
stronger claim, and the corpus stays affordable in CI.

The tricks for `tasks: all` wrap a task's honest solution and attack what every grade shares (the
call record, the output structure, the dtype and value checks), so by default they run on a
covering sample of the suite, not on every task: the fewest tasks that between them show every
level, contract kind, output kind (floating, integer, bool, several outputs), stage outputs,
hidden shapes and non-tensor arguments (`covering_sample`), and each remaining task is given
to one `all` trick in turn, so every shipped task meets at least one. `KGYM_FULL_CORPUS=1`
grades every `all` trick against every task (about 350 grades more). That each task's own
contract rejects zeros, passed-through inputs and NaN outputs is checked on every task, in
process, by `kgym check-tasks` (tests/grading/test_task_validation.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import torch

from gym.grading.options import GradeOptions
from gym.grading.grader import grade
from gym.schema.result import Status
from gym.tasks.inputs import generate_inputs
from gym.tasks.loader import discover
from gym.tasks.model import Task
from gym.tasks.references import reference_outputs
from gym.worker.dtypes import dtype_from_name

CORPUS = Path(__file__).resolve().parent
MARKER = "# {SOLUTION}"
TASKS = {task.id: task for task in discover().tasks}


@dataclass(frozen=True)
class Trick:
    path: Path
    name: str
    expect: frozenset[Status]
    tasks: tuple[str, ...]
    reason: str | None
    runtime: bool
    runtime_expect: frozenset[Status]
    late_calls: bool = False
    for_all: bool = False


def _field(doc: str, key: str) -> str | None:
    match = re.search(rf"^{key}:\s*(.+?)\s*(#.*)?$", doc, re.MULTILINE)
    return match.group(1).strip() if match else None


def _statuses(text: str) -> frozenset[Status]:
    statuses = frozenset(Status(part.strip()) for part in text.split(","))
    assert Status.passed not in statuses
    return statuses


@cache
def _first_call(task_id: str) -> tuple[frozenset[str], bool]:
    """One reference call (first public shape, first dtype): what it returns ('floating', 'integer', 'bool',
    'several') and whether an argument is not a tensor."""
    task = TASKS[task_id]
    dtype = dtype_from_name(task.spec.dtypes[0])
    shape = task.spec.shapes.public[0]
    inputs = generate_inputs(task, shape, dtype, 0, torch.device("cpu"))
    outputs, _ = reference_outputs(task, inputs, shape)
    kinds = {"bool" if out.dtype == torch.bool else "floating" if out.is_floating_point() else "integer" for out in outputs}
    non_tensor = any(not isinstance(value, torch.Tensor) for value in inputs.values())
    return frozenset(kinds | ({"several"} if len(outputs) > 1 else set())), non_tensor


def _has_floating_output(task: Task) -> bool:
    return "floating" in _first_call(task.id)[0]


def task_features(task: Task) -> frozenset[str]:
    """What a task shows the grader: its level, contract kinds, output kinds and the shape of its interface."""
    spec = task.spec
    output_kinds, non_tensor = _first_call(task.id)
    features = {f"level:{task.id.split('/')[0]}", *(f"contract:{check.kind}" for check in spec.contract)}
    features |= {f"output:{kind}" for kind in output_kinds}
    features |= {f"dtype:{name}" for name in spec.dtypes}
    if spec.stages:
        features.add("stages")
    if spec.shapes.hidden:
        features.add("hidden_shapes")
    if non_tensor:
        features.add("non_tensor_argument")
    return frozenset(features)


def covering_sample(task_ids: list[str]) -> list[str]:
    """The fewest tasks (greedy set cover, ties by id) that between them show every feature of `task_ids`."""
    features = {task_id: task_features(TASKS[task_id]) for task_id in task_ids}
    uncovered = set().union(*features.values())
    chosen: list[str] = []
    while uncovered:
        best = max(sorted(features), key=lambda task_id: len(features[task_id] & uncovered))
        chosen.append(best)
        uncovered -= features[best]
    return chosen


FULL_CORPUS = os.environ.get("KGYM_FULL_CORPUS", "") == "1"


def load_trick(path: Path) -> Trick:
    source = path.read_text()
    doc_match = re.match(r'\s*"""(.*?)"""', source, re.DOTALL)
    assert doc_match, f"{path.name}: needs a module docstring"
    doc = doc_match.group(1)
    name = _field(doc, "Trick")
    expect = _field(doc, "expect")
    tasks = _field(doc, "tasks")
    assert name and expect and tasks, f"{path.name}: docstring needs Trick:, expect: and tasks:"
    task_ids = tuple(TASKS) if tasks == "all" else tuple(t.strip() for t in tasks.split(","))
    if _field(doc, "applies") == "floating_outputs":
        # The trick rewrites floating outputs only: on a task whose outputs are all integer or bool it is the
        # honest kernel itself, and passing is right.
        task_ids = tuple(task_id for task_id in task_ids if _has_floating_output(TASKS[task_id]))
    if tasks == "all":
        assert MARKER in source, f"{path.name}: a trick for all tasks must contain {MARKER!r}"
    runtime_expect = _field(doc, "runtime_expect")
    return Trick(
        path=path,
        name=name,
        expect=_statuses(expect),
        tasks=task_ids,
        reason=_field(doc, "reason"),
        runtime=(_field(doc, "runtime") or "no").lower() == "yes",
        runtime_expect=_statuses(runtime_expect) if runtime_expect else frozenset(Status) - {Status.passed},
        late_calls=(_field(doc, "late_calls") or "no").lower() == "yes",
        for_all=tasks == "all",
    )


def graded_tasks(tricks: list[Trick]) -> dict[str, tuple[str, ...]]:
    """The tasks each trick is graded against: all it applies to for a listed trick (or with
    KGYM_FULL_CORPUS=1); for a `tasks: all` trick, the covering sample of what it applies to plus
    its round-robin share of the rest, so every task meets at least one `all` trick."""
    graded = {trick.name: trick.tasks for trick in tricks}
    every = [trick for trick in tricks if trick.for_all]
    if FULL_CORPUS or not every:
        return graded
    sample = covering_sample(list(TASKS))
    rest = [task_id for task_id in TASKS if task_id not in sample]
    for trick in every:
        graded[trick.name] = tuple(task_id for task_id in sample if task_id in trick.tasks)
    for number, task_id in enumerate(rest):
        # The next `all` trick (in turn) that applies to the task takes it.
        for step in range(len(every)):
            trick = every[(number + step) % len(every)]
            if task_id in trick.tasks:
                graded[trick.name] += (task_id,)
                break
    return graded


TRICKS = [load_trick(path) for path in sorted(CORPUS.glob("*.py")) if not path.name.startswith("test_")]
GRADED = graded_tasks(TRICKS)
CASES = [(trick, task_id) for trick in TRICKS for task_id in GRADED[trick.name]]
RUNTIME_CASES = [(trick, trick.tasks[0]) for trick in TRICKS if trick.runtime]


def _submission(trick: Trick, task_id: str, tmp_path: Path) -> Path:
    source = trick.path.read_text()
    if MARKER in source:
        source = source.replace(MARKER, TASKS[task_id].solution_path.read_text())
    path = tmp_path / trick.path.name
    path.write_text(source)
    return path


def test_corpus_is_large_and_well_formed() -> None:
    assert len(TRICKS) >= 30
    for trick in TRICKS:
        for task_id in trick.tasks:
            assert task_id in TASKS, f"{trick.path.name}: unknown task {task_id}"


def test_every_task_meets_an_all_trick_and_the_sample_shows_every_feature() -> None:
    every = [trick for trick in TRICKS if trick.for_all]
    met = {task_id for trick in every for task_id in GRADED[trick.name]}
    assert met == set(TASKS)
    sample = covering_sample(list(TASKS))
    assert set().union(*(task_features(TASKS[task_id]) for task_id in sample)) == set().union(*(task_features(task) for task in TASKS.values()))
    for trick in every:
        assert set(GRADED[trick.name]) >= {task_id for task_id in sample if task_id in trick.tasks}
        assert set(GRADED[trick.name]) <= set(trick.tasks)
    features = {task_id: task_features(TASKS[task_id]) for task_id in TASKS}
    assert {"output:integer", "output:bool", "output:several", "stages", "level:l3"} <= set().union(*features.values())


@pytest.mark.parametrize(("trick", "task_id"), CASES, ids=[f"{t.path.stem}-{task}" for t, task in CASES])
def test_trick_never_passes(trick: Trick, task_id: str, tmp_path: Path) -> None:
    result = grade(TASKS[task_id], _submission(trick, task_id, tmp_path), GradeOptions(late_calls=trick.late_calls), secret=1129)
    assert result.status != Status.passed, f"{trick.name} PASSED on {task_id}"
    assert result.status in trick.expect, (trick.name, task_id, result.status, result.error, result.integrity_flags)
    if trick.reason:
        evidence = " ".join([*result.integrity_flags, result.error or "", result.feedback])
        assert trick.reason in evidence, (trick.name, task_id, evidence[:2000])


@pytest.mark.parametrize(("trick", "task_id"), RUNTIME_CASES, ids=[f"{t.path.stem}-runtime" for t, _ in RUNTIME_CASES])
def test_runtime_defences_alone_stop_it(trick: Trick, task_id: str, tmp_path: Path) -> None:
    result = grade(TASKS[task_id], _submission(trick, task_id, tmp_path), GradeOptions(audit=False, late_calls=trick.late_calls), secret=2911)
    assert result.status != Status.passed, f"{trick.name} PASSED on {task_id} with the audit off"
    assert result.status in trick.runtime_expect, (trick.name, result.status, result.error, result.integrity_flags)
