"""Read run folders for the site: whatever is malformed is reported and skipped, never fatal.

A folder without a readable run.json, or without a single usable attempt, is
skipped as a whole (`RunFolderError`). Inside a usable folder, a malformed or
torn results.jsonl line, a missing or malformed grade.json, or a line that
points outside the folder costs only that attempt; each is recorded in
`LoadedRun.problems` with paths relative to the run folder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gym.errors import RunFolderError
from gym.harness.run_folder import AttemptLine, RunManifest, read_grade, read_manifest, read_results
from gym.schema.result import GradeResult

# "<suite>/<name>", where a suite may nest ("kb/l1/19_relu"), as gym.tasks.model.TaskSpec.id allows.
TASK_ID = re.compile(r"^[a-z0-9_]+(/[a-z0-9_]+)+$")


@dataclass(frozen=True)
class LoadedAttempt:
    line: AttemptLine
    grade: GradeResult
    # The submitted source (None when submission.py is missing).
    source: str | None
    # The agent transcript (None when there is none or it is unreadable).
    transcript: list[Any] | None


@dataclass
class LoadedRun:
    folder: Path
    manifest: RunManifest
    attempts: list[LoadedAttempt] = field(default_factory=list)
    # What was skipped inside the folder, with paths relative to it.
    problems: list[str] = field(default_factory=list)


def _relative(message: str, folder: Path) -> str:
    """Strip the build machine's path of the run folder from a message."""
    for prefix in {str(folder) + "/", str(folder.resolve()) + "/"}:
        message = message.replace(prefix, "")
    return message


def _attempt_folder(run_dir: Path, line: AttemptLine) -> Path:
    relative = Path(line.path)
    if relative.is_absolute() or ".." in relative.parts:
        raise RunFolderError(f"results.jsonl: attempt {line.task_id}#{line.attempt}: path {line.path!r} leaves the run folder")
    return run_dir / relative


def _read_transcript(path: Path, problems: list[str]) -> list[Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as error:
        problems.append(f"{path.name}: not JSON ({error}); transcript not shown")
        return None
    return data if isinstance(data, list) else [data]


def load_attempt(run_dir: Path, line: AttemptLine, problems: list[str]) -> LoadedAttempt:
    """One attempt's files; raises RunFolderError when its grade is unusable."""
    if not TASK_ID.match(line.task_id):
        raise RunFolderError(f"results.jsonl: task id {line.task_id!r} is not <suite>/<name> (suites may nest: kb/l1/<name>)")
    folder = _attempt_folder(run_dir, line)
    grade = read_grade(run_dir, line)
    if grade.task_id != line.task_id:
        raise RunFolderError(f"{line.path}/grade.json: task_id {grade.task_id!r} but results.jsonl says {line.task_id!r}")
    source_path = folder / "submission.py"
    source = source_path.read_bytes().decode("utf-8", errors="replace") if source_path.is_file() else None
    if source is None:
        problems.append(f"{line.path}/submission.py: missing; source not shown")
    transcript_problems: list[str] = []
    transcript = _read_transcript(folder / "transcript.json", transcript_problems)
    problems.extend(f"{line.path}/{problem}" for problem in transcript_problems)
    return LoadedAttempt(line=line, grade=grade, source=source, transcript=transcript)


def load_run(run_dir: Path) -> LoadedRun:
    """Read one run folder; raises RunFolderError when nothing in it is usable."""
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir}: not a folder")
    manifest = read_manifest(run_dir)
    run = LoadedRun(folder=run_dir, manifest=manifest)
    raw_problems: list[str] = []
    lines = read_results(run_dir, raw_problems)
    results = run_dir / "results.jsonl"
    if results.is_file():
        data = results.read_bytes()
        if data and not data.endswith(b"\n"):
            raw_problems.append(f"{results}: torn last line (the run was killed mid-write)")
    # A resumed run may repeat an attempt: the last line for (task, attempt) wins.
    latest: dict[tuple[str, int], AttemptLine] = {}
    for line in lines:
        latest[(line.task_id, line.attempt)] = line
    for key in sorted(latest):
        try:
            run.attempts.append(load_attempt(run_dir, latest[key], raw_problems))
        except (RunFolderError, OSError) as error:
            raw_problems.append(f"{error}; attempt skipped")
    run.problems = [_relative(problem, run_dir) for problem in raw_problems]
    if not run.attempts:
        detail = "; ".join(run.problems[:3])
        raise RunFolderError(f"{run_dir}: no usable attempt" + (f" ({detail})" if detail else " (results.jsonl is empty or missing)"))
    return run
