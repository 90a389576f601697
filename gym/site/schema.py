"""`leaderboard.json`: the site's data in a versioned schema others can build on.

Every page of the site is rendered from one `Leaderboard` object, and the same
object is written as `leaderboard.json`. URLs are relative to the site root.
Bump `LEADERBOARD_SCHEMA_VERSION` on any change that could break a reader;
`leaderboard/README.md` documents every field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from gym.schema.aggregates import Aggregate
from gym.schema.result import Environment, Status

LEADERBOARD_SCHEMA_VERSION = 1

# "gpu": timed on a GPU; "interpreted": timed under the Triton interpreter on CPU.
# The two are never mixed in one table, chart or aggregate.
BoardKind = Literal["gpu", "interpreted"]

INTERPRETED_HARDWARE = "interpreted (CPU)"


class SiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class RunInfo(SiteModel):
    # The run's id inside this site: its run_id made URL-safe, suffixed "-2", "-3"... when folders share one.
    slug: str
    # The run_id from run.json.
    run_id: str
    # Agent name as registered ("solutions", "replay", "openai", ...).
    agent: str
    # Model name for LLM agents; None for the others.
    model: str | None
    # Suite the run covered, or None when tasks were named one by one.
    suite: str | None
    # The GPU name, or "interpreted (CPU)".
    hardware: str
    kind: BoardKind
    # Version of the gym that graded the run.
    gym_version: str
    # ISO-8601 UTC start and end of the run; `ended_at` is None for a run that did not finish.
    started_at: str
    ended_at: str | None
    # True when the run ended and every task it was configured with has at least one graded attempt.
    complete: bool
    # Version of every task in the run, by task id.
    task_versions: dict[str, int]
    # The manifest's environment fingerprint (python, torch, triton, platform, device, GPU, driver, sandbox).
    environment: Environment
    # Attempts read from the run folder and shown on the site.
    attempts: int
    # What in the folder was unusable and skipped (paths relative to the run folder).
    problems: list[str]


class TaskResult(SiteModel):
    """A row's result on one task: the best attempt (a pass beats any failure, then the higher speedup vs eager)."""

    task_id: str
    # Task version the grade was made against.
    task_version: int
    status: Status
    # Reference (eager PyTorch) time / kernel time; None when not measured.
    speedup_vs_eager: float | None
    # torch.compile time / kernel time; None when not measured.
    speedup_vs_compile: float | None
    # Fraction of the hardware's speed of light; None when not known.
    sol_fraction: float | None
    # Integrity rules the attempt broke (non-empty only for rejected attempts).
    integrity_flags: list[str]
    # Id of the submission (see `submissions`).
    submission: str
    # URL of the submission's page.
    url: str
    # Attempts graded on this task in the run the best one came from.
    attempts: int


class Row(SiteModel):
    """One leaderboard row: an (agent, model, hardware class)."""

    # URL-safe id of the row, unique in the site.
    id: str
    agent: str
    model: str | None
    hardware: str
    kind: BoardKind
    # Figures over `results` (the best grade per task), computed by gym.schema.aggregates.aggregate.
    aggregate: Aggregate
    # Date (YYYY-MM-DD, UTC) of the latest run start in the row.
    date: str
    # Gym versions of the runs in the row, sorted.
    gym_versions: list[str]
    # Version of every task in `results`, by task id.
    task_versions: dict[str, int]
    # Slugs of the runs merged into the row (when several, a task's best grade over all of them counts).
    runs: list[str]
    # False when some run in the row did not finish or left tasks without a graded attempt.
    complete: bool
    # The best result per task, sorted by task id.
    results: list[TaskResult]
    # Tasks the row's runs were configured with but never graded, sorted; they count in
    # `aggregate.tasks` as neither correct nor fast.
    unattempted: list[str]


class Board(SiteModel):
    """One table of the index: GPU rows and interpreted rows are never in the same board."""

    kind: BoardKind
    # Heading shown on the site.
    title: str
    # Sorted by correct rate, then fast_1 vs eager, then geometric-mean speedup (all descending).
    rows: list[Row]


class TaskInfo(SiteModel):
    # "<suite>/<name>".
    id: str
    # URL of the task's page.
    url: str
    # True when the task is still in this checkout's tasks/ folder; False shows only what the runs recorded.
    present: bool
    # Title, description and version from the task file (None when the task is gone).
    title: str | None
    description: str | None
    current_version: int | None
    # Task versions the runs graded, sorted.
    graded_versions: list[int]
    # The contract's checks, one line each as the agent's prompt shows them (empty when the task is gone).
    contract: list[str]
    # Why task details are missing or differ from the grades, when they do.
    note: str | None


class SubmissionInfo(SiteModel):
    """One graded attempt."""

    # Unique id: "<run slug>/<suite>/<name>/<attempt>".
    id: str
    # URL of the submission's page.
    url: str
    # Slug of its run.
    run: str
    task_id: str
    task_version: int
    # 1-based attempt number within the task's episode.
    attempt: int
    status: Status
    speedup_vs_eager: float | None
    speedup_vs_compile: float | None
    sol_fraction: float | None
    # The GPU name, or "interpreted (CPU)".
    hardware: str
    kind: BoardKind
    integrity_flags: list[str]
    # sha256 of the submitted file.
    submission_sha256: str
    # ISO-8601 UTC time the grade finished.
    graded_at: str
    # URLs of copies of the submitted source, the full grade (GradeResult JSON) and the agent transcript; None when absent.
    source: str | None
    grade: str
    transcript: str | None


class Leaderboard(SiteModel):
    # Version of this schema (see LEADERBOARD_SCHEMA_VERSION); readers should check it.
    schema_version: int = LEADERBOARD_SCHEMA_VERSION
    # The index tables: at most one "gpu" and one "interpreted" board, GPU first.
    boards: list[Board]
    # Every run folder used, sorted by run_id.
    runs: list[RunInfo]
    # Every task some run graded, sorted by id.
    tasks: list[TaskInfo]
    # Every attempt shown, sorted by id.
    submissions: list[SubmissionInfo]
