"""The leaderboard's confirmation gate: an implausible speedup is ranked only once a confirmation grade reproduced it."""

from __future__ import annotations

from pathlib import Path

from gym.schema.aggregates import aggregate
from gym.schema.result import GradeResult, Status
from gym.schema.signal import Confirmation
from gym.site import Leaderboard, build_site
from tests.support.run_folders import Attempt, RunSpec, make_grade, write_run

REASON = "speedup 5x vs torch.compile exceeds 3x"


def confirmed(grade: GradeResult, second: float, reproduced: bool = True) -> GradeResult:
    first = grade.speedup_vs_eager
    return grade.model_copy(
        update={"confirmation": Confirmation(reason=REASON, speedup_first=first, speedup_second=second, status_second="passed", reproduced=reproduced)}
    )


def build(tmp_path: Path, attempts: list[Attempt], tasks: list[str] | None = None) -> tuple[Leaderboard, Path]:
    run = write_run(tmp_path / "run", RunSpec(run_id="r", agent="openai", model="m", device="cuda", tasks=tasks or [], attempts=attempts))
    build_site([run], tmp_path / "site")
    site = tmp_path / "site"
    return Leaderboard.model_validate_json((site / "leaderboard.json").read_bytes()), site


def test_an_unconfirmed_implausible_pass_is_shown_but_not_ranked(tmp_path: Path) -> None:
    implausible = make_grade("l1/softmax", Status.passed, eager=12.0, compile=5.0, sha="1")
    plausible = make_grade("l1/vector_add", Status.passed, eager=1.2, compile=1.1, sha="2")
    board, site = build(tmp_path, [Attempt("l1/softmax", implausible), Attempt("l1/vector_add", plausible)])
    (row,) = board.boards[0].rows
    assert row.unconfirmed == ["l1/softmax"]
    assert [result.task_id for result in row.results] == ["l1/vector_add"]
    # The held-back task counts as neither correct nor fast; its 12x is in no aggregate.
    assert row.aggregate.tasks == 2 and row.aggregate.correct_rate == 0.5
    assert row.aggregate == aggregate([plausible], unattempted=1)
    assert row.unattempted == []
    states = {sub.task_id: sub.confirmation for sub in board.submissions}
    assert states == {"l1/softmax": "unconfirmed", "l1/vector_add": None}
    # Shown on its own page, marked; not among the task page's fastest kernels.
    (page,) = [sub for sub in board.submissions if sub.task_id == "l1/softmax"]
    submission_html = (site / page.url).read_text()
    assert "awaiting confirmation" in submission_html and "not ranked" in submission_html
    task_html = (site / "tasks/l1/softmax.html").read_text()
    assert page.url not in task_html  # no row's result, no fastest kernel: the task page does not link it
    index = (site / "index.html").read_text()
    assert "1 awaiting confirmation" in index and "a pass awaiting confirmation (not ranked)" in index


def test_a_held_back_pass_leaves_the_tasks_best_other_attempt_counting(tmp_path: Path) -> None:
    failed = make_grade("l1/softmax", Status.wrong_answer, sha="1")
    implausible = make_grade("l1/softmax", Status.passed, eager=12.0, compile=5.0, sha="2")
    board, _ = build(tmp_path, [Attempt("l1/softmax", failed), Attempt("l1/softmax", implausible)])
    (row,) = board.boards[0].rows
    (result,) = row.results
    assert result.status == Status.wrong_answer and result.attempts == 2
    assert row.unconfirmed == ["l1/softmax"] and row.aggregate.correct_rate == 0.0


def test_a_confirmed_pass_is_ranked_and_marked(tmp_path: Path) -> None:
    grade = confirmed(make_grade("l1/softmax", Status.passed, eager=12.0, compile=5.0, sha="1"), second=11.0)
    board, site = build(tmp_path, [Attempt("l1/softmax", grade)])
    (row,) = board.boards[0].rows
    (result,) = row.results
    assert result.status == Status.passed and result.speedup_vs_eager == 12.0 and result.confirmation == "confirmed"
    assert row.unconfirmed == [] and row.aggregate.correct_rate == 1.0
    assert board.submissions[0].confirmation == "confirmed"
    task_html = (site / "tasks/l1/softmax.html").read_text()
    assert task_html.count("&#10003; confirmed") >= 2  # the best-result row and the fastest-kernels entry
    submission_html = (site / board.submissions[0].url).read_text()
    assert "reproduced it" in submission_html and REASON in submission_html
    assert ", confirmed" in (site / "index.html").read_text()


def test_a_pass_with_a_failed_confirmation_is_never_ranked(tmp_path: Path) -> None:
    """confirmed() turns such a grade into `rejected`; a pass that still carries one (hand-made) is held back too."""
    grade = confirmed(make_grade("l1/softmax", Status.passed, eager=12.0, compile=5.0, sha="1"), second=1.0, reproduced=False)
    rejected = confirmed(make_grade("l1/vector_add", Status.rejected, flags=["speedup_not_reproduced"], sha="2"), second=1.0, reproduced=False)
    board, _ = build(tmp_path, [Attempt("l1/softmax", grade), Attempt("l1/vector_add", rejected)])
    (row,) = board.boards[0].rows
    assert row.unconfirmed == ["l1/softmax"]
    (result,) = row.results
    assert result.task_id == "l1/vector_add" and result.status == Status.rejected and result.confirmation == "not_reproduced"
    assert result.integrity_flags == ["speedup_not_reproduced"]


def test_plausible_and_interpreted_passes_need_no_confirmation(tmp_path: Path) -> None:
    cpu = make_grade("l1/softmax", Status.passed, interpreted=True, eager=40.0, sha="1")
    gpu = make_grade("l1/vector_add", Status.passed, eager=2.0, compile=2.9, sha="2")
    board, _ = build(tmp_path, [Attempt("l1/softmax", cpu), Attempt("l1/vector_add", gpu)])
    assert all(sub.confirmation is None for sub in board.submissions)
    assert all(row.unconfirmed == [] for b in board.boards for row in b.rows)
