"""Issue 37's patterns, each graded by the full grader in both real sandboxes (bwrap and docker).

The honest corpus (test_honest.py) grades every `v37_*` file in bwrap; here the same files are graded
in docker too, and the variants of a pattern that need no file of their own (a host read through
`.tolist()` instead of `.item()`) are graded from the file with that one line changed. The counterparts
that must fail sit beside them: a host read of float data is compute, and a host read whose value
depends on the order of the data cannot be replayed on inputs the call never saw.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import discover
from tests.support.sandboxes import sandbox_or_skip

from test_honest import CORPUS_FILES, SECRET, TASKS, Honest

PATTERNS = [honest for honest in CORPUS_FILES if honest.path.name.startswith("v37_")]
ITEM_COUNT = next(honest for honest in PATTERNS if honest.path.stem == "v37_item_count_cross_entropy")
READ_LINE = "    n = int(count.item())\n"


def _variant(tmp_path: Path, replacement: str) -> Path:
    source = ITEM_COUNT.path.read_text()
    assert READ_LINE in source
    path = tmp_path / "variant.py"
    path.write_text(source.replace(READ_LINE, replacement))
    return path


def test_every_pattern_of_the_issue_has_a_file() -> None:
    names = {honest.path.stem for honest in PATTERNS}
    for wanted in ("annotated_helper", "libdevice_try", "staticmethod_namespace", "workspace_per_call", "semaphore_last_block", "item_count"):
        assert any(wanted in name for name in names), wanted


@pytest.mark.parametrize("honest", PATTERNS, ids=[honest.path.stem for honest in PATTERNS])
def test_pattern_passes_in_docker(honest: Honest) -> None:
    result = grade(TASKS[honest.task_id], honest.path, GradeOptions(sandbox=sandbox_or_skip("docker")), secret=SECRET)
    assert result.status == Status.passed, f"{honest.path.name}: {result.status.value} {result.integrity_flags} {result.error!r}"


def test_a_count_read_through_tolist_passes(tmp_path: Path) -> None:
    path = _variant(tmp_path, "    (n,) = count.tolist()\n")
    result = grade(TASKS[ITEM_COUNT.task_id], path, GradeOptions(sandbox=sandbox_or_skip("bwrap")), secret=SECRET + 1)
    assert result.status == Status.passed, f"{result.status.value} {result.integrity_flags} {result.error!r}"


def test_a_host_read_of_float_data_is_compute(tmp_path: Path) -> None:
    path = _variant(tmp_path, READ_LINE + "    n = n + 0 * int(logits[0, 0].item())\n")
    result = grade(TASKS[ITEM_COUNT.task_id], path, GradeOptions(sandbox=sandbox_or_skip("bwrap")), secret=SECRET)
    assert result.status == Status.rejected
    assert "torch_compute:aten._local_scalar_dense" in result.integrity_flags


def test_a_host_read_that_depends_on_the_data_order_cannot_be_replayed(tmp_path: Path) -> None:
    # Which position drew the first ticket is the call's own, not a count: the replay reads another one.
    path = _variant(tmp_path, READ_LINE + "    first = int(rows[0].item())\n")
    result = grade(TASKS[ITEM_COUNT.task_id], path, GradeOptions(sandbox=sandbox_or_skip("bwrap")), secret=SECRET)
    assert result.status == Status.rejected
    assert result.integrity_flags == ["replay_failed"]
    assert "read" in (result.error or "") and "on the host" in (result.error or "")


def test_discover_knows_the_pattern_tasks() -> None:
    ids = {task.id for task in discover().tasks}
    assert {honest.task_id for honest in PATTERNS} <= ids
