"""The durable record of `kgym serve` (gym.serve.state): what is written
survives a reopen, a grade is recorded once, unfinished submissions come back
queued, a session's latest episode comes back with its graded attempts, and one
server holds a folder at a time."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym.errors import ServeStateError
from gym.harness.env import Env
from gym.schema.result import Status
from gym.serve.sessions import replay
from gym.serve.state import DATABASE, SCHEMA_VERSION, ServeState, SubmissionRecord, default_state_dir, now
from tests.support.fake_grades import fake_grade, marker_grader

TASK = "l1/vector_add"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def state(folder: Path) -> Iterator[ServeState]:
    store = ServeState(folder)
    yield store
    store.close()


def queued(submission_id: str, code: str = "x = 1\n") -> SubmissionRecord:
    return SubmissionRecord(id=submission_id, task_id=TASK, code=code, submitted_at=now())


def step(session_id: str, episode_id: str, attempt: int, status: Status) -> SubmissionRecord:
    code = f"# attempt {attempt}\n"
    return SubmissionRecord(
        id=f"{episode_id}-{attempt}",
        task_id=TASK,
        code=code,
        submitted_at=now(),
        started_at=now(),
        finished_at=now(),
        grade=fake_grade(TASK, code, status),
        session_id=session_id,
        episode_id=episode_id,
        attempt=attempt,
    )


def test_a_grade_is_recorded_once_and_survives_a_reopen(folder: Path) -> None:
    state = ServeState(folder)
    accepted = queued("a", "print('a')\n")
    state.insert(accepted)
    assert state.submission("a") == accepted
    state.mark_running("a")
    running = state.submission("a")
    assert running is not None and running.started_at is not None and running.grade is None
    first = fake_grade(TASK, "print('a')\n", Status.passed)
    assert state.record_grade("a", first)
    assert not state.record_grade("a", fake_grade(TASK, "print('a')\n", Status.wrong_answer))  # never graded twice
    assert state.submission("nope") is None
    state.close()

    reopened = ServeState(folder)
    try:
        record = reopened.submission("a")
        assert record is not None and record.code == "print('a')\n" and record.finished_at is not None
        assert record.grade == first
        assert reopened.requeue() == []
    finally:
        reopened.close()


def test_the_database_is_wal_and_versioned(state: ServeState, folder: Path) -> None:
    with sqlite3.connect(folder / DATABASE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_requeue_answers_the_ungraded_one_offs_oldest_first_back_to_queued(state: ServeState) -> None:
    for submission_id in ("first", "second", "graded", "third"):
        state.insert(queued(submission_id))
    state.mark_running("second")
    state.record_grade("graded", fake_grade(TASK, "x = 1\n", Status.passed))
    state.insert(step("s", "e", 1, Status.wrong_answer))  # an episode's step is never requeued
    again = state.requeue()
    assert [record.id for record in again] == ["first", "second", "third"]
    assert all(record.started_at is None and record.grade is None for record in again)


def test_open_episode_is_the_latest_reset_with_its_attempts_in_order(state: ServeState) -> None:
    assert state.open_episode("s") is None
    state.start_episode("s", "old", TASK)
    state.insert(step("s", "old", 1, Status.passed))
    state.start_episode("s", "new", TASK)
    state.insert(step("s", "new", 2, Status.passed))
    state.insert(step("s", "new", 1, Status.wrong_answer))
    episode = state.open_episode("s")
    assert episode is not None and (episode.episode_id, episode.task_id) == ("new", TASK)
    assert [grade.status for grade in episode.grades] == [Status.wrong_answer, Status.passed]
    with pytest.raises(sqlite3.IntegrityError):
        state.insert(step("s", "new", 2, Status.passed).model_copy(update={"id": "again"}))  # one record per attempt
    assert state.submission("new-1") is None  # steps are not one-off submissions
    state.close_session("s")
    assert state.open_episode("s") is None


def test_replay_puts_an_env_where_the_episode_stood(state: ServeState) -> None:
    state.start_episode("s", "episode-1", TASK)
    state.insert(step("s", "episode-1", 1, Status.wrong_answer))
    state.insert(step("s", "episode-1", 2, Status.rejected))
    episode = state.open_episode("s")
    assert episode is not None
    env = Env(max_attempts=3, grader=marker_grader())
    replay(env, episode)
    resumed = env.state
    assert (resumed.episode_id, resumed.task_id, resumed.attempts, resumed.rewards, resumed.done) == ("episode-1", TASK, 2, [0.0, -1.0], False)
    assert resumed.best is not None and resumed.best.status == Status.wrong_answer


def test_one_server_holds_a_folder_at_a_time(state: ServeState, folder: Path) -> None:
    with pytest.raises(ServeStateError, match="in use by another kgym serve"):
        ServeState(folder)
    state.close()
    ServeState(folder).close()


def test_a_newer_database_is_refused(folder: Path) -> None:
    folder.mkdir()
    with sqlite3.connect(folder / DATABASE) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ServeStateError, match="newer kernel-gym"):
        ServeState(folder)
    ServeState(folder / "elsewhere").close()  # the refused folder's lock was let go


def test_an_unusable_folder_is_a_serve_state_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ServeStateError, match="cannot open"):
        ServeState(blocker)


def test_without_a_folder_the_record_is_temporary() -> None:
    state = ServeState()
    state.insert(queued("a"))
    folder = state.folder
    assert (folder / DATABASE).is_file()
    state.close()
    assert not folder.exists()


def test_default_state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KGYM_SERVE_STATE", str(tmp_path / "chosen"))
    assert default_state_dir() == tmp_path / "chosen"
    monkeypatch.delenv("KGYM_SERVE_STATE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_state_dir() == tmp_path / "data" / "kgym" / "serve"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir() == tmp_path / "home" / ".local" / "share" / "kgym" / "serve"


def test_an_episode_keeps_the_kernel_language_of_its_prompt_through_a_resume(state: ServeState) -> None:
    state.start_episode("s", "episode-1", TASK, "helion")
    episode = state.open_episode("s")
    assert episode is not None and episode.dsl == "helion"
    env = Env(max_attempts=3, grader=marker_grader())
    replay(env, episode)
    assert env.episode_dsl == "helion"
    assert "## Submission format (Helion)" in env.reset(TASK, dsl=episode.dsl).prompt


def test_a_version_1_record_gains_the_kernel_language_as_triton(folder: Path) -> None:
    folder.mkdir()
    with sqlite3.connect(folder / DATABASE) as db:
        db.executescript(
            "CREATE TABLE episodes (episode_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, task_id TEXT NOT NULL,"
            " started_at TEXT NOT NULL, closed_at TEXT);"
            f"INSERT INTO episodes VALUES ('old', 's', '{TASK}', '2026-01-01T00:00:00+00:00', NULL);"
            "PRAGMA user_version = 1;"
        )
    state = ServeState(folder)
    try:
        episode = state.open_episode("s")
        assert episode is not None and (episode.episode_id, episode.dsl) == ("old", "triton")
    finally:
        state.close()
    with sqlite3.connect(folder / DATABASE) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
