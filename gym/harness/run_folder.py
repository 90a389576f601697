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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from gym.errors import RecordVersionError, RunFolderError
from gym.harness.reward import RewardConfig
from gym.schema.episode import HarnessModel
from gym.schema.records import read_record
from gym.schema.result import Environment, GradeResult, Status

RUN_SCHEMA_VERSION = 1
MANIFEST_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
ATTEMPTS_DIR = "attempts"


class RunConfig(HarnessModel):
    agent: str = Field(description='Agent name as registered ("solutions", "replay", "openai").')
    model: str | None = Field(default=None, description="Model name for LLM agents; None for the others.")
    suite: str | None = Field(
        default=None,
        description="Suite the tasks came from, or None when tasks were named one by one.",
    )
    split: str | None = Field(default=None, description="The split (train / val / test) the tasks were drawn from, or None for every split.")
    tasks: list[str] = Field(description="Task ids in the order they are run.")
    attempts: int = Field(ge=1, description="Attempt budget per task (episode).")
    concurrency: int = Field(default=1, ge=1, description="Episodes graded at once.")
    sandbox: str = Field(description="Sandbox backend every grade ran in.")
    device: str = Field(description='torch device the grades ran on ("cpu" or "cuda").')
    contract: str | None = Field(
        default=None, description="Contract preset graded against instead of each task's own (e.g. \"kernelbench\"); None for the tasks' own."
    )
    agent_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Agent-specific settings (base URL, replay folder, ...), never secrets.",
    )
    executor: str = Field(default="local", description='Where the grades ran: "local" (this host) or "ray" (a Ray cluster); a run may resume under another.')
    reward: RewardConfig = Field(
        default_factory=RewardConfig,
        description=(
            "The reward function every attempt's reward was computed with: its preset (`kgym run --reward`) and every field; "
            "a run made before presets existed reads back as the default. A resume under another reward is refused."
        ),
    )

    @field_validator("reward", mode="before")
    @classmethod
    def _recorded_infra(cls, value: Any) -> Any:
        """A run recorded before infra_error was capped at a wrong answer's reward (e.g. kernrl's infra 0 above its
        failed -0.25) reads back with today's infra (its recorded attempts keep the rewards they earned)."""
        if isinstance(value, dict) and "infra" in value:
            try:
                recorded = RewardConfig.model_validate({key: item for key, item in value.items() if key != "infra"})
            except ValueError:
                return value
            if value["infra"] is not None and float(value["infra"]) > recorded.failed:
                return {key: item for key, item in value.items() if key != "infra"}
        return value


class RunManifest(HarnessModel):
    schema_version: int = Field(
        default=RUN_SCHEMA_VERSION,
        description="Version of the run folder's schema (RUN_SCHEMA_VERSION); readers refuse a newer one.",
    )
    run_id: str = Field(description="The run folder's name when it was created.")
    config: RunConfig = Field(description="How the run was configured.")
    environment: Environment = Field(description="torch/triton/python versions, device, GPU, driver, sandbox backend.")
    task_versions: dict[str, int] = Field(
        description="Version of every task in the run, by id (grades of another version are not comparable).",
    )
    gym_version: str = Field(description="Version of the gym (the kernel-gym package) that graded the run.")
    started_at: str = Field(description="ISO-8601 UTC time the run started.")
    ended_at: str | None = Field(default=None, description="ISO-8601 UTC time the run completed; None until it does.")
    resumed: int = Field(default=0, description="How many times the run was resumed.")
    episodes_ended: dict[str, str] = Field(
        default_factory=dict,
        description='Episodes that are over, by task id, and why: "passed", "budget", "agent_stopped", "agent_error: ...".',
    )


class AttemptLine(HarnessModel):
    schema_version: int = Field(
        default=RUN_SCHEMA_VERSION,
        description="Version of the run folder's schema (RUN_SCHEMA_VERSION); readers refuse a newer one.",
    )
    task_id: str = Field(description='The task, e.g. "l1/softmax".')
    task_version: int = Field(description="Version of the task the attempt was graded against.")
    attempt: int = Field(ge=1, description="1-based attempt number within the task's episode.")
    status: Status = Field(description="The grade's status.")
    reward: float = Field(description="The reward the attempt earned.")
    speedup_vs_eager: float | None = Field(
        default=None,
        description="Reference (eager PyTorch) median time / candidate median time; None when not measured.",
    )
    speedup_vs_compile: float | None = Field(
        default=None,
        description="torch.compile median time / candidate median time; None when not measured.",
    )
    sol_fraction: float | None = Field(
        default=None,
        description="Speed-of-light time / candidate time on a known GPU; None elsewhere.",
    )
    interpreted: bool | None = Field(
        default=None,
        description="True when timed under the Triton interpreter (CPU); None when not timed.",
    )
    integrity_flags: list[str] = Field(
        default_factory=list,
        description='Integrity rules broken, e.g. "input_mutated:x".',
    )
    submission_sha256: str = Field(description="sha256 of the submission file's bytes.")
    path: str = Field(description="The attempt's folder, relative to the run folder.")
    episode_done: bool = Field(
        description="True when the episode ended with this attempt (passed, budget spent, or the agent gave up).",
    )
    graded_at: str = Field(description="ISO-8601 UTC time the grade finished.")
    duration_s: float = Field(description="Wall-clock seconds the grade took.")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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
    """ "key.path: message" of a validation error's first problem (`whole` when it has no key)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    return f"{where}: {first['msg']}"


Model = TypeVar("Model", bound=BaseModel)


def _read_json_model(path: Path, model: type[Model], missing: str) -> Model:
    if not path.is_file():
        raise RunFolderError(f"{path}: {missing}")
    try:
        return read_record(path, model)
    except ValidationError as error:
        raise RunFolderError(f"{path}: {_first_problem(error)}") from None
    except RecordVersionError as error:
        raise RunFolderError(str(error)) from error


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
    """Every well-formed line; malformed ones are described in `problems` (when given) and skipped.

    A line newer than this gym understands is skipped the same way when `problems` is given (the site),
    and raises RunFolderError when it is not (a resumed run must not mix in attempts it cannot read)."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        return []
    lines: list[AttemptLine] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(read_record(raw, AttemptLine, source=f"{path}:{number}"))
        except ValidationError as error:
            if problems is not None:
                problems.append(f"{path}:{number}: {_first_problem(error, '(line)')}")
        except RecordVersionError as error:
            if problems is None:
                raise RunFolderError(str(error)) from error
            problems.append(str(error))
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


def write_attempt(run_dir: Path, task_id: str, attempt: int, code: str, grade: GradeResult, transcript: list[dict[str, Any]] | None) -> str:
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
