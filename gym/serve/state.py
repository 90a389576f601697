"""The durable record of `kgym serve`: submissions, their grades, and the episodes sessions play.

A served gym must lose nothing when it dies: an RL trainer would silently lose
rewards. One SQLite database in the state folder (`serve.sqlite3`, WAL mode,
`synchronous=FULL`) holds two tables, and every write is committed before the
server answers the client:

- `submissions`: one row per graded piece of code. A one-off `POST /submissions`
  (no session) is written when it is accepted and its `grade` (GradeResult JSON)
  filled in once, when graded: `record_grade` only fills an empty grade, so an id
  is never graded twice. A restarted server asks `requeue` for the ones without
  a grade (queued or running when it died) and grades them.
  An episode's step is written once graded, with its session id, episode id and
  attempt number: a step the server died during was never answered, so it
  costs no attempt (the client sends it again).
- `episodes`: one row per `/reset` of a session (session id, episode id, task
  id). `open_episode` answers a session's latest episode with its graded
  attempts, which a restarted server replays into a fresh `Env`; `DELETE
  /session` marks the session closed, and a closed one is never resumed.

One server holds a state folder at a time (an exclusive lock on `serve.lock`,
released when the process ends, however it ends). Without a folder the record
lives in a temporary folder removed on `close` (nothing survives the process).
The default folder is `KGYM_SERVE_STATE`, else `$XDG_DATA_HOME/kgym/serve`,
else `~/.local/share/kgym/serve`.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from pydantic import Field

from gym.errors import ServeStateError
from gym.schema.episode import HarnessModel
from gym.schema.records import read_record
from gym.schema.result import DSLS, Dsl, GradeResult
from gym.tasks.paths import user_data_dir

# Bumped whenever the tables change; a database written by a newer gym is refused.
# 2: episodes.dsl (the kernel language the episode's prompt asked for); a version-1 record gains it as "triton".
SCHEMA_VERSION = 2
DATABASE = "serve.sqlite3"
LOCK = "serve.lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    code TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    grade TEXT,
    session_id TEXT,
    episode_id TEXT,
    attempt INTEGER,
    UNIQUE (episode_id, attempt)
);
CREATE INDEX IF NOT EXISTS submissions_ungraded ON submissions (submitted_at) WHERE grade IS NULL;
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    closed_at TEXT,
    dsl TEXT NOT NULL DEFAULT 'triton'
);
CREATE INDEX IF NOT EXISTS episodes_by_session ON episodes (session_id);
"""

_COLUMNS = "id, task_id, code, submitted_at, started_at, finished_at, grade, session_id, episode_id, attempt"


def now() -> str:
    """The current UTC time, ISO-8601 to the second (how every record stamps its times)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_state_dir() -> Path:
    """Where `kgym serve` keeps its record unless told: `KGYM_SERVE_STATE`, else the user's data folder."""
    return user_data_dir("serve", "KGYM_SERVE_STATE")


class SubmissionRecord(HarnessModel):
    """One graded (or still to be graded) piece of code, as the record holds it."""

    id: str = Field(description="The submission's id (what POST /submissions answered; a fresh one for each step).")
    task_id: str = Field(description='The task graded against, e.g. "l1/vector_add".')
    code: str = Field(description="The submitted source, byte for byte.")
    submitted_at: str = Field(description="ISO-8601 UTC time the server received it.")
    started_at: str | None = Field(default=None, description="ISO-8601 UTC time its grade started; None while queued.")
    finished_at: str | None = Field(default=None, description="ISO-8601 UTC time its grade was recorded; None until then.")
    grade: GradeResult | None = Field(default=None, description="The grade, recorded once; None until graded.")
    session_id: str | None = Field(default=None, description="The session whose episode this step belongs to; None for a one-off submission.")
    episode_id: str | None = Field(default=None, description="The episode this step belongs to; None for a one-off submission.")
    attempt: int | None = Field(default=None, ge=1, description="The step's attempt number in its episode (1 first); None for a one-off submission.")


class EpisodeRecord(HarnessModel):
    """A session's episode: enough to put a fresh `Env` back where the episode stood."""

    session_id: str = Field(description="The session that played the episode (the X-Session-Id).")
    episode_id: str = Field(description="The episode's id (State.episode_id).")
    task_id: str = Field(description='The task the episode solves, e.g. "l1/vector_add".')
    started_at: str = Field(description="ISO-8601 UTC time of the /reset that started it.")
    dsl: Dsl = Field(default="triton", description='The kernel language the episode\'s prompt asked for ("triton" or "helion").')
    grades: list[GradeResult] = Field(default_factory=list, description="The grades of its attempts, attempt 1 first.")


class ServeState:
    """The record in one state folder; thread-safe (one connection behind a lock)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if folder is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="kgym-serve-")
            folder = Path(self._temporary.name)
        self.folder = folder.expanduser().resolve()
        self._lock = threading.Lock()
        self._held = self._hold(self.folder)
        try:
            self._db = self._connect(self.folder / DATABASE)
        except BaseException:
            self._held.close()
            raise

    # ------------------------------------------------------------ submissions

    def insert(self, record: SubmissionRecord) -> None:
        """Write a new submission: a one-off one as it is accepted, an episode's step once graded."""
        grade = record.grade.model_dump_json() if record.grade is not None else None
        values = (record.id, record.task_id, record.code, record.submitted_at, record.started_at, record.finished_at, grade)
        with self._lock, self._db:
            self._db.execute(
                f"INSERT INTO submissions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, record.session_id, record.episode_id, record.attempt),
            )

    def mark_running(self, submission_id: str) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE submissions SET started_at = ? WHERE id = ? AND grade IS NULL", (now(), submission_id))

    def record_grade(self, submission_id: str, grade: GradeResult) -> bool:
        """Record the grade of a submission that has none; False (nothing written) when it already has one."""
        with self._lock, self._db:
            cursor = self._db.execute(
                "UPDATE submissions SET grade = ?, finished_at = ? WHERE id = ? AND grade IS NULL",
                (grade.model_dump_json(), now(), submission_id),
            )
        return cursor.rowcount == 1

    def submission(self, submission_id: str) -> SubmissionRecord | None:
        """A one-off submission by id (episode steps are read through their episode)."""
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE id = ? AND session_id IS NULL", (submission_id,)).fetchone()
        return self._record(row) if row is not None else None

    def requeue(self) -> list[SubmissionRecord]:
        """The one-off submissions without a grade (queued or running when a server stopped), back to queued, oldest first."""
        with self._lock, self._db:
            self._db.execute("UPDATE submissions SET started_at = NULL WHERE grade IS NULL AND session_id IS NULL")
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE grade IS NULL AND session_id IS NULL ORDER BY rowid").fetchall()
        return [self._record(row) for row in rows]

    # ------------------------------------------------------------ episodes

    def start_episode(self, session_id: str, episode_id: str, task_id: str, dsl: str = "triton") -> None:
        """Record a /reset: `episode_id` is now the session's episode (its prompt in kernel language `dsl`)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO episodes (episode_id, session_id, task_id, started_at, dsl) VALUES (?, ?, ?, ?, ?)",
                (episode_id, session_id, task_id, now(), dsl),
            )

    def open_episode(self, session_id: str) -> EpisodeRecord | None:
        """The session's latest episode with its graded attempts; None for a session never reset or closed."""
        with self._lock:
            row = self._db.execute(
                "SELECT episode_id, task_id, started_at, closed_at, dsl FROM episodes WHERE session_id = ? ORDER BY rowid DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            if row is None or row[3] is not None:
                return None
            grades = self._db.execute("SELECT id, grade FROM submissions WHERE episode_id = ? ORDER BY attempt", (row[0],)).fetchall()
        return EpisodeRecord(
            session_id=session_id,
            episode_id=row[0],
            task_id=row[1],
            started_at=row[2],
            dsl=row[4] if row[4] in DSLS else "triton",
            grades=[self._grade(submission_id, text) for submission_id, text in grades],
        )

    def close_session(self, session_id: str) -> None:
        """Record that the session was closed for good (DELETE /session): it is never resumed."""
        with self._lock, self._db:
            self._db.execute("UPDATE episodes SET closed_at = ? WHERE session_id = ? AND closed_at IS NULL", (now(), session_id))

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the database and let another server take the folder (a temporary one is removed)."""
        with self._lock:
            self._db.close()
        self._held.close()
        if self._temporary is not None:
            self._temporary.cleanup()

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _hold(folder: Path) -> TextIO:
        """The folder's lock file, locked (flock) for as long as it stays open, naming this process."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = (folder / LOCK).open("a+", encoding="utf-8")
        except OSError as error:
            raise ServeStateError(f"cannot open the serve state folder {folder}: {error}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise ServeStateError(f"the serve state folder {folder} is in use by another kgym serve (pid {holder}); stop it or pass another --state") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        return handle

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        """Open (creating) the database: WAL, every commit synced to disk, the tables in place; a newer one is refused."""
        try:
            db = sqlite3.connect(path, check_same_thread=False, timeout=10)
            try:
                found = db.execute("PRAGMA user_version").fetchone()[0]
                if found > SCHEMA_VERSION:
                    raise ServeStateError(
                        f"{path} was written by a newer kernel-gym (schema {found}, this one reads {SCHEMA_VERSION}); serve it with a newer kernel-gym"
                    )
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = FULL")
                with db:
                    db.executescript(_SCHEMA)
                    if 0 < found < 2:
                        db.execute("ALTER TABLE episodes ADD COLUMN dsl TEXT NOT NULL DEFAULT 'triton'")
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                db.close()
                raise
        except sqlite3.Error as error:
            raise ServeStateError(f"cannot open the serve record {path}: {error}") from None
        return db

    def _record(self, row: tuple[object, ...]) -> SubmissionRecord:
        keys = _COLUMNS.split(", ")
        values = dict(zip(keys, row, strict=True))
        text = values.pop("grade")
        grade = self._grade(str(values["id"]), text) if isinstance(text, str) else None
        return SubmissionRecord.model_validate({**values, "grade": grade})

    def _grade(self, submission_id: str, text: str) -> GradeResult:
        return read_record(text, GradeResult, source=f"{self.folder / DATABASE}: submission {submission_id}")
