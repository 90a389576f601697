"""The run folder `kgym run` writes and the leaderboard reads.

    RUN_DIR/
      run.json                      RunManifest: config, environment fingerprint, start/end
      results.jsonl                 one AttemptLine per graded attempt (append-only, fsync'd)
      attempts/<suite>/<name>/<n>/  submission.py, grade.json, transcript.json (when the agent has one)

An attempt's folder is written before its line is appended, so a line always
points at complete files; a run killed at any moment loses at most the attempt
in flight. A torn last line (kill -9 mid-write) is cut off when the run resumes.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from gym.schema.episode import HarnessModel
from gym.schema.result import Environment, GradeResult, Status

RUN_SCHEMA_VERSION = 1
MANIFEST_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
ATTEMPTS_DIR = "attempts"


class RunFolderError(Exception):
    """A run folder that cannot be used: missing, malformed, or made with another config."""


class RunConfig(HarnessModel):
    # Agent name as registered ("solutions", "replay", "openai").
    agent: str
    # Model name for LLM agents; None for the others.
    model: str | None = None
    # Suite the tasks came from, or None when tasks were named one by one.
    suite: str | None = None
    # Task ids in the order they are run.
    tasks: list[str]
    # Attempt budget per task (episode).
    attempts: int = Field(ge=1)
    # Episodes graded at once.
    concurrency: int = Field(default=1, ge=1)
    sandbox: str
    # torch device the grades ran on ("cpu" or "cuda").
    device: str
    # Agent-specific settings (base URL, replay folder, ...), never secrets.
    agent_options: dict[str, Any] = {}


class RunManifest(HarnessModel):
    schema_version: int = RUN_SCHEMA_VERSION
    # The run folder's name when it was created.
    run_id: str
    config: RunConfig
    # torch/triton/python versions, device, GPU, driver, sandbox backend.
    environment: Environment
    # Version of every task in the run, by id (grades of another version are not comparable).
    task_versions: dict[str, int]
    # Version of the gym (the kernel-gym package) that graded the run.
    gym_version: str
    # ISO-8601 UTC; `ended_at` stays None until the run completes.
    started_at: str
    ended_at: str | None = None
    # How many times the run was resumed.
    resumed: int = 0
    # Episodes that are over, by task id, and why: "passed", "budget", "agent_stopped", "agent_error: ...".
    episodes_ended: dict[str, str] = {}


class AttemptLine(HarnessModel):
    schema_version: int = RUN_SCHEMA_VERSION
    task_id: str
    task_version: int
    # 1-based attempt number within the task's episode.
    attempt: int = Field(ge=1)
    status: Status
    reward: float
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    sol_fraction: float | None = None
    interpreted: bool | None = None
    integrity_flags: list[str] = []
    submission_sha256: str
    # The attempt's folder, relative to the run folder.
    path: str
    # True when the episode ended with this attempt (passed, budget spent, or the agent gave up).
    episode_done: bool
    graded_at: str
    duration_s: float


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def attempt_path(task_id: str, attempt: int) -> str:
    """The attempt folder relative to the run folder ("attempts/l1/softmax/1")."""
    return f"{ATTEMPTS_DIR}/{task_id}/{attempt}"


def _write_atomic(path: Path, data: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    _write_atomic(run_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n")


def _first_problem(error: ValidationError, whole: str = "(top level)") -> str:
    """"key.path: message" of a validation error's first problem (`whole` when it has no key)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    return f"{where}: {first['msg']}"


Model = TypeVar("Model", bound=BaseModel)


def _read_json_model(path: Path, model: type[Model], missing: str) -> Model:
    if not path.is_file():
        raise RunFolderError(f"{path}: {missing}")
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise RunFolderError(f"{path}: {_first_problem(error)}") from None


def read_manifest(run_dir: Path) -> RunManifest:
    return _read_json_model(run_dir / MANIFEST_FILE, RunManifest, "missing (not a run folder?)")


def repair_results(run_dir: Path) -> int:
    """Cut a torn last line (no trailing newline) off results.jsonl; bytes removed."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        return 0
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return 0
    keep = data.rfind(b"\n") + 1
    with open(path, "r+b") as handle:
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return len(data) - keep


def read_results(run_dir: Path, problems: list[str] | None = None) -> list[AttemptLine]:
    """Every well-formed line; malformed ones are described in `problems` (when given) and skipped."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        return []
    lines: list[AttemptLine] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(AttemptLine.model_validate_json(raw))
        except ValidationError as error:
            if problems is not None:
                problems.append(f"{path}:{number}: {_first_problem(error, '(line)')}")
    return lines


class ResultsLog:
    """Append-only results.jsonl: one line per attempt, flushed and fsync'd, thread-safe."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / RESULTS_FILE
        self._lock = threading.Lock()

    def append(self, line: AttemptLine) -> None:
        data = line.model_dump_json() + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())


def write_attempt(
    run_dir: Path, task_id: str, attempt: int, code: str, grade: GradeResult, transcript: list[dict[str, Any]] | None
) -> str:
    """Write an attempt's files (each atomically); return its folder relative to the run folder."""
    relative = attempt_path(task_id, attempt)
    folder = run_dir / relative
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomic(folder / "submission.py", code)
    _write_atomic(folder / "grade.json", grade.model_dump_json(indent=2) + "\n")
    if transcript is not None:
        _write_atomic(folder / "transcript.json", json.dumps(transcript, indent=2, default=str) + "\n")
    return relative


def read_grade(run_dir: Path, line: AttemptLine) -> GradeResult:
    return _read_json_model(run_dir / line.path / "grade.json", GradeResult, "missing")
