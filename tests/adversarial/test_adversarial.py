"""The adversarial corpus (tests/adversarial/): no hostile submission may pass.

Each file is graded against every task it applies to with the full grader
(static audit on); files marked `runtime: yes` are graded again with the audit
off, on their first task, to prove the runtime defences stop them on their own.
The late calls (a couple of hundred more checked calls per grade) only add
checks, so they run only for the tricks whose defence they are
(`late_calls: yes`): every other trick is stopped without them, which is the
stronger claim, and the corpus stays affordable in CI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

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


def _field(doc: str, key: str) -> str | None:
    match = re.search(rf"^{key}:\s*(.+?)\s*(#.*)?$", doc, re.MULTILINE)
    return match.group(1).strip() if match else None


def _statuses(text: str) -> frozenset[Status]:
    statuses = frozenset(Status(part.strip()) for part in text.split(","))
    assert Status.passed not in statuses
    return statuses


def _has_floating_output(task: Task) -> bool:
    """Whether the reference returns a floating tensor (first public shape, first dtype)."""
    dtype = dtype_from_name(task.spec.dtypes[0])
    shape = task.spec.shapes.public[0]
    inputs = generate_inputs(task, shape, dtype, 0, torch.device("cpu"))
    outputs, _ = reference_outputs(task, inputs, shape)
    return any(output.is_floating_point() for output in outputs)


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
    )


TRICKS = [load_trick(path) for path in sorted(CORPUS.glob("*.py")) if not path.name.startswith("test_")]
CASES = [(trick, task_id) for trick in TRICKS for task_id in trick.tasks]
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


@pytest.mark.parametrize(("trick", "task_id"), CASES, ids=[f"{t.path.stem}-{task}" for t, task in CASES])
def test_trick_never_passes(trick: Trick, task_id: str, tmp_path: Path) -> None:
    result = grade(TASKS[task_id], _submission(trick, task_id, tmp_path), secret=1129, late_calls=trick.late_calls)
    assert result.status != Status.passed, f"{trick.name} PASSED on {task_id}"
    assert result.status in trick.expect, (trick.name, task_id, result.status, result.error, result.integrity_flags)
    if trick.reason:
        evidence = " ".join([*result.integrity_flags, result.error or "", result.feedback])
        assert trick.reason in evidence, (trick.name, task_id, evidence[:2000])


@pytest.mark.parametrize(("trick", "task_id"), RUNTIME_CASES, ids=[f"{t.path.stem}-runtime" for t, _ in RUNTIME_CASES])
def test_runtime_defences_alone_stop_it(trick: Trick, task_id: str, tmp_path: Path) -> None:
    result = grade(TASKS[task_id], _submission(trick, task_id, tmp_path), secret=2911, audit=False, late_calls=trick.late_calls)
    assert result.status != Status.passed, f"{trick.name} PASSED on {task_id} with the audit off"
    assert result.status in trick.runtime_expect, (trick.name, result.status, result.error, result.integrity_flags)
