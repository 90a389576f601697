"""Boards per scope: rows share a table only when their runs covered the same suites under the same contract.

Our suites ("l1") and KernelBench's imported ones ("kb/l1", ...) are never ranked
together, nor are grades of a task's own contract and of a contract preset
("kernelbench"); in leaderboard.json, on the index (distinct board ids) and on the
task pages. Tasks imported elsewhere (not in any task root here) still get a page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gym.harness.run_folder import read_manifest, write_manifest
from gym.schema.result import Status
from gym.site import Leaderboard, build_site
from gym.site.schema import Board, board_id, read_leaderboard
from gym.site.tasks import task_info
from tests.support.run_folders import Attempt, RunSpec, make_grade, write_run

KB_TASKS = ["kb/l1/1_relu", "kb/l1/2_gelu"]


@pytest.fixture(autouse=True)
def only_the_shipped_task_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No KernelBench task of this machine's user root or KGYM_TASKS may show up on the pages."""
    monkeypatch.delenv("KGYM_TASKS", raising=False)
    monkeypatch.setenv("KGYM_USER_TASKS", str(tmp_path / "no-user-tasks"))


def scoped_run(
    folder: Path,
    run_id: str,
    agent: str,
    passes: dict[str, float],
    *,
    model: str | None = None,
    suite: str | None = "l1",
    contract: str | None = None,
    device: str = "cuda",
) -> Path:
    """A finished run whose every task passed with the given speedup vs eager, configured with `suite` and `contract`."""
    interpreted = device == "cpu"
    attempts = [
        Attempt(task_id, make_grade(task_id, Status.passed, eager=eager, interpreted=interpreted).model_copy(update={"contract_preset": contract}))
        for task_id, eager in passes.items()
    ]
    write_run(folder, RunSpec(run_id=run_id, agent=agent, model=model, device=device, attempts=attempts))
    manifest = read_manifest(folder)
    config = manifest.config.model_copy(update={"suite": suite, "contract": contract})
    write_manifest(folder, manifest.model_copy(update={"config": config}))
    return folder


def load_board(site: Path) -> Leaderboard:
    return Leaderboard.model_validate_json((site / "leaderboard.json").read_bytes())


def sections(index: str) -> dict[str, str]:
    """Each board's section of the index, by its HTML id."""
    found = re.findall(r'<section class="board" id="([^"]+)"(.*?)</section>', index, flags=re.DOTALL)
    return dict(found)


def test_kernelbench_rows_and_ours_never_share_a_board(tmp_path: Path) -> None:
    ours = scoped_run(tmp_path / "ours", "ours", "openai", {"l1/softmax": 2.0, "l1/vector_add": 1.1}, model="m")
    kb = scoped_run(tmp_path / "kb", "kb", "openai", {task: 1.5 for task in KB_TASKS}, model="m", suite="kb/l1")
    other = scoped_run(tmp_path / "other", "other", "solutions", {"l1/softmax": 1.6, "l1/vector_add": 0.9})
    report = build_site([ours, kb, other], tmp_path / "site")
    assert report.index is not None and not report.skipped and not report.problems
    site = tmp_path / "site"
    lb = load_board(site)

    # leaderboard.json: the two l1 rows share a board, the kb/l1 row is alone in its own.
    assert [(b.id, b.kind, b.suites, b.contract) for b in lb.boards] == [
        ("board-gpu--l1", "gpu", ["l1"], None),
        ("board-gpu--kb-l1", "gpu", ["kb/l1"], None),
    ]
    l1, kb_board = lb.boards
    assert [(row.agent, row.runs) for row in l1.rows] == [("openai", ["ours"]), ("solutions", ["other"])]
    assert [(row.agent, row.model, row.runs) for row in kb_board.rows] == [("openai", "m", ["kb"])]
    # Same agent, model and hardware, other scope: another row, with its own id.
    (kb_row,) = kb_board.rows
    assert kb_row.suites == ["kb/l1"] and kb_row.contract is None and kb_row.id not in {row.id for row in l1.rows}
    assert all(row.suites == ["l1"] for row in l1.rows)
    assert [result.task_id for result in kb_row.results] == KB_TASKS and kb_row.aggregate.tasks == 2
    assert l1.title == "GPU runs · suites l1 · each task's own contract"
    assert kb_board.title == "GPU runs · suites kb/l1 · each task's own contract"
    assert {run.slug: run.suites for run in lb.runs} == {"kb": ["kb/l1"], "other": ["l1"], "ours": ["l1"]}

    # index.html: one section per board, distinct ids, no task of the other scope in either.
    index = (site / "index.html").read_text()
    found = sections(index)
    assert list(found) == ["board-gpu--l1", "board-gpu--kb-l1"]
    assert "kb/l1/" not in found["board-gpu--l1"] and "solutions" in found["board-gpu--l1"]
    assert "l1/softmax" not in found["board-gpu--kb-l1"] and "kb/l1/1_relu" in found["board-gpu--kb-l1"]
    assert "solutions" not in found["board-gpu--kb-l1"]
    assert len(re.findall(r'\bid="(board-[^"]+)"', index)) == len(set(re.findall(r'\bid="(board-[^"]+)"', index))) == 2

    # The imported tasks are in no task root here: their pages say so and show the kb board only.
    tasks = {task.id: task for task in lb.tasks}
    assert not tasks["kb/l1/1_relu"].present and tasks["kb/l1/1_relu"].contract == []
    relu = (site / "tasks/kb/l1/1_relu.html").read_text()
    assert "not in this checkout" in relu and "1.50×" in relu
    assert 'href="../../../index.html#board-gpu--kb-l1"' in relu and "#board-gpu--l1" not in relu
    softmax = (site / "tasks/l1/softmax.html").read_text()
    assert "#board-gpu--l1" in softmax and "kb-l1" not in softmax
    assert (site / "submissions/kb/kb/l1/1_relu/1.html").is_file()


def test_a_kernelbench_contract_run_gets_a_board_apart_from_the_plain_one(tmp_path: Path) -> None:
    plain = scoped_run(tmp_path / "plain", "plain", "solutions", {"l1/softmax": 1.2})
    preset = scoped_run(tmp_path / "preset", "preset", "solutions", {"l1/softmax": 3.0}, contract="kernelbench")
    build_site([plain, preset], tmp_path / "site")
    site = tmp_path / "site"
    lb = load_board(site)
    assert [(b.id, b.suites, b.contract, [row.runs for row in b.rows]) for b in lb.boards] == [
        ("board-gpu--l1", ["l1"], None, [["plain"]]),
        ("board-gpu--l1--contract-kernelbench", ["l1"], "kernelbench", [["preset"]]),
    ]
    assert lb.boards[1].title == "GPU runs · suites l1 · KernelBench tolerance (contract kernelbench)"
    assert lb.boards[1].rows[0].contract == "kernelbench" and lb.boards[0].rows[0].contract is None
    assert {run.slug: run.contract for run in lb.runs} == {"plain": None, "preset": "kernelbench"}
    assert {sub.run: sub.contract for sub in lb.submissions} == {"plain": None, "preset": "kernelbench"}
    assert list(sections((site / "index.html").read_text())) == ["board-gpu--l1", "board-gpu--l1--contract-kernelbench"]

    # The task page has a section per board; each lists only its own board's fastest kernels.
    page = (site / "tasks/l1/softmax.html").read_text()
    plain_part, preset_part = page.split('id="task-board-gpu--l1--contract-kernelbench"')
    plain_part = plain_part.split('id="task-board-gpu--l1"')[1]
    assert "1.20× vs eager" in plain_part and "3.00×" not in plain_part
    assert "3.00× vs eager" in preset_part and "1.20×" not in preset_part
    assert "contract preset <code>kernelbench</code>" in preset_part
    assert "preset <code>kernelbench</code>" in (site / "submissions/preset/l1/softmax/1.html").read_text()
    assert "the task's own" in (site / "submissions/plain/l1/softmax/1.html").read_text()


def test_boards_go_gpu_first_then_our_suites_before_kernelbench_then_by_suites(tmp_path: Path) -> None:
    runs = [
        scoped_run(tmp_path / "kb12", "kb12", "a", {"kb/l1/1_relu": 1.0, "kb/l2/1_conv": 1.0}, suite="kb"),
        scoped_run(tmp_path / "cpu", "cpu", "a", {"l1/softmax": 0.1}, device="cpu"),
        scoped_run(tmp_path / "kb1", "kb1", "a", {"kb/l1/1_relu": 1.0}, suite="kb/l1"),
        scoped_run(tmp_path / "mixed", "mixed", "a", {"l1/softmax": 1.0, "kb/l1/1_relu": 1.0}, suite=None),
        scoped_run(tmp_path / "ours", "ours", "a", {"l1/softmax": 1.0}),
        scoped_run(tmp_path / "ours-kb", "ours-kb", "a", {"l1/softmax": 1.0}, contract="kernelbench"),
    ]
    build_site(runs, tmp_path / "site")
    lb = load_board(tmp_path / "site")
    assert [b.id for b in lb.boards] == [
        "board-gpu--l1",
        "board-gpu--l1--contract-kernelbench",
        "board-gpu--kb-l1",
        "board-gpu--kb-l1--kb-l2",
        "board-gpu--kb-l1--l1",
        "board-interpreted--l1",
    ]
    assert all(len(board.rows) == 1 for board in lb.boards)
    assert len({row.id for board in lb.boards for row in board.rows}) == 6
    assert list(sections((tmp_path / "site/index.html").read_text())) == [b.id for b in lb.boards]
    assert lb.boards[-1].title.startswith("Interpreted runs") and lb.boards[-1].title.endswith("· suites l1 · each task's own contract")


def test_board_ids_are_unique_per_scope() -> None:
    assert board_id("gpu", ["l1"], None) == "board-gpu--l1"
    assert board_id("gpu", ("kb/l1", "kb/l2"), None) == "board-gpu--kb-l1--kb-l2"
    assert board_id("interpreted", ["l1"], "kernelbench") == "board-interpreted--l1--contract-kernelbench"
    assert Board(kind="gpu", title="GPU runs", rows=[]).id == "board-gpu"
    assert Board(kind="gpu", suites=["kb/l1"], contract="kernelbench", title="t", rows=[]).id == "board-gpu--kb-l1--contract-kernelbench"


def test_a_leaderboard_json_written_before_scopes_still_reads(tmp_path: Path) -> None:
    run = scoped_run(tmp_path / "run", "run", "solutions", {"l1/softmax": 1.2})
    build_site([run], tmp_path / "site")
    path = tmp_path / "site" / "leaderboard.json"
    data = json.loads(path.read_text())
    for board in data["boards"]:
        for key in ("id", "suites", "contract"):
            del board[key]
        for row in board["rows"]:
            del row["suites"], row["contract"]
    for info in data["runs"]:
        del info["suites"], info["contract"]
    for sub in data["submissions"]:
        del sub["contract"]
    path.write_text(json.dumps(data))
    old = read_leaderboard(path)
    assert old.schema_version == 1
    (board,) = old.boards
    assert (board.id, board.kind, board.suites, board.contract) == ("board-gpu", "gpu", [], None)
    assert board.rows[0].suites == [] and old.runs[0].suites == [] and old.submissions[0].contract is None


def test_task_info_of_a_task_in_no_task_root_degrades_to_what_the_runs_recorded() -> None:
    for task_id in ("kb/l1/1_relu", "kb/l3/9_some_model", "nosuite", "kb/../l1/softmax"):
        info = task_info(task_id, [2, 1, 2])
        assert not info.present and info.graded_versions == [1, 2] and info.contract == [] and info.title is None
        assert info.note is not None and "no such task" in info.note and info.url == f"tasks/{task_id}.html"
    assert task_info("l1/softmax", [1]).present
