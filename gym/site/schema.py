"""`leaderboard.json`: the site's data in a versioned schema others can build on.

Every page of the site is rendered from one `Leaderboard` object, and the same
object is written as `leaderboard.json`. URLs are relative to the site root.
Bump `LEADERBOARD_SCHEMA_VERSION` on any change that could break a reader;
`leaderboard/README.md` documents every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from gym.schema.aggregates import Aggregate
from gym.schema.records import RecordModel, read_record
from gym.schema.result import Dsl, Environment, Status
from gym.site.urls import slugify

LEADERBOARD_SCHEMA_VERSION = 1

# "gpu": timed on a GPU; "interpreted": timed under the Triton interpreter on CPU.
# The two are never mixed in one table, chart or aggregate.
BoardKind = Literal["gpu", "interpreted"]

# What a run is compared on besides its hardware kind: the sorted suites of its configured tasks
# ("l1", "kb/l1", ...) and the contract preset graded against (None: each task's own contract).
# Rows of different scopes never share a board.
SuiteSet = tuple[str, ...]

INTERPRETED_HARDWARE = "interpreted (CPU)"

# Where a grade stands with the re-check of implausible speedups (gym.grading.confirm):
# "confirmed": a confirmation grade (fresh secret, calls in another order) reproduced its speedup;
# "unconfirmed": a pass whose speedup needs a confirmation (by gym.grading.confirm.DEFAULT_THRESHOLD)
# it does not carry: shown on its submission page, never ranked;
# "not_reproduced": the confirmation grade did not reproduce it (the grade is rejected, or an infra_error).
ConfirmationState = Literal["confirmed", "unconfirmed", "not_reproduced"]
CONFIRMATION_DESCRIPTION = (
    'Where the grade stands with the re-check of implausible speedups (gym.grading.confirm): "confirmed" (a confirmation grade with a '
    'fresh secret reproduced the speedup), "unconfirmed" (a pass that needs a confirmation it lacks: never ranked), "not_reproduced" '
    "(the confirmation grade failed or reached less than half: the grade is rejected), or None (none needed)."
)


def suite_of(task_id: str) -> str:
    """A task's suite: everything before the last "/" of its id ("kb/l1/19_relu" -> "kb/l1")."""
    return task_id.rsplit("/", 1)[0]


def board_id(kind: BoardKind, suites: list[str] | SuiteSet, contract: str | None) -> str:
    """The HTML id of a board: "board-<kind>", then each suite ("/" as "-"), then "contract-<preset>", joined by "--".

    Suite names never hold "-", so two scopes never give the same id ("board-gpu--l1",
    "board-gpu--kb-l1--kb-l2", "board-gpu--l1--contract-kernelbench"). A board read from a
    leaderboard.json written before boards had scopes is plain "board-<kind>", as its pages used."""
    parts = [f"board-{kind}", *(suite.replace("/", "-") for suite in suites)]
    if contract is not None:
        parts.append(f"contract-{contract}")
    return slugify("--".join(parts))


class SiteModel(RecordModel):
    """Base of the site's models: unknown keys rejected (ignored when `read_leaderboard` reads a leaderboard.json)."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class RunInfo(SiteModel):
    slug: str = Field(
        description=('The run\'s id inside this site: its run_id made URL-safe, suffixed "-2", "-3"... when folders share one.'),
    )
    run_id: str = Field(description="The run_id from run.json.")
    agent: str = Field(description='Agent name as registered ("solutions", "replay", "openai", ...).')
    model: str | None = Field(description="Model name for LLM agents; None for the others.")
    suite: str | None = Field(description="Suite the run covered, or None when tasks were named one by one.")
    suites: list[str] = Field(
        default_factory=list,
        description=(
            'The run\'s scope: the sorted suites of the tasks it was configured with ("l1", "kb/l1"; a task\'s suite is its id before the last "/"). '
            "Empty only in a leaderboard.json written before scopes were recorded."
        ),
    )
    contract: str | None = Field(
        default=None,
        description="The contract preset the run graded against instead of each task's own (e.g. \"kernelbench\"); None for the tasks' own.",
    )
    hardware: str = Field(description='The GPU name, or "interpreted (CPU)".')
    kind: BoardKind = Field(description="The hardware kind: gpu or interpreted.")
    gym_version: str = Field(description="Version of the gym that graded the run.")
    started_at: str = Field(description="ISO-8601 UTC start of the run.")
    ended_at: str | None = Field(description="ISO-8601 UTC end of the run; None for a run that did not finish.")
    complete: bool = Field(
        description="True when the run ended and every task it was configured with has at least one graded attempt.",
    )
    task_versions: dict[str, int] = Field(description="Version of every task in the run, by task id.")
    environment: Environment = Field(
        description=("The manifest's environment fingerprint (python, torch, triton, platform, device, GPU, driver, sandbox)."),
    )
    attempts: int = Field(description="Attempts read from the run folder and shown on the site.")
    problems: list[str] = Field(
        description="What in the folder was unusable and skipped (paths relative to the run folder).",
    )


class TaskResult(SiteModel):
    """A row's result on one task: the best attempt (a pass beats any failure, then the higher speedup vs eager)."""

    task_id: str = Field(description='"<suite>/<name>".')
    task_version: int = Field(description="Task version the grade was made against.")
    status: Status = Field(description="The best attempt's status.")
    speedup_vs_eager: float | None = Field(
        description="Reference (eager PyTorch) time / kernel time; None when not measured.",
    )
    speedup_vs_compile: float | None = Field(description="torch.compile time / kernel time; None when not measured.")
    sol_fraction: float | None = Field(description="Fraction of the hardware's speed of light; None when not known.")
    integrity_flags: list[str] = Field(
        description="Integrity rules the attempt broke (non-empty only for rejected attempts).",
    )
    confirmation: ConfirmationState | None = Field(default=None, description=CONFIRMATION_DESCRIPTION + ' Never "unconfirmed" here.')
    submission: str = Field(description="Id of the submission (see `submissions`).")
    url: str = Field(description="URL of the submission's page.")
    attempts: int = Field(description="Attempts graded on this task in the run the best one came from.")
    dsl: Dsl = Field(default="triton", description='The kernel language of the best attempt: "triton" or "helion" (GradeResult.dsl).')


class Row(SiteModel):
    """One leaderboard row: an (agent, model, hardware class, scope), the scope being its runs' suites and contract."""

    id: str = Field(description="URL-safe id of the row, unique in the site.")
    agent: str = Field(description='Agent name ("solutions", "replay", "openai", ...).')
    model: str | None = Field(description="Model name for LLM agents; None for the others.")
    hardware: str = Field(description='The GPU name, or "interpreted (CPU)".')
    kind: BoardKind = Field(description="The board the row is in: gpu or interpreted.")
    suites: list[str] = Field(
        default_factory=list,
        description=(
            "The sorted suites of the tasks the row's runs were configured with (their scope; the row's board has the same). "
            "Empty only in a leaderboard.json written before scopes were recorded."
        ),
    )
    contract: str | None = Field(
        default=None,
        description="The contract preset the row's runs graded against (None: each task's own); the row's board has the same.",
    )
    aggregate: Aggregate = Field(
        description="Figures over `results` (the best grade per task), computed by gym.schema.aggregates.aggregate.",
    )
    date: str = Field(description="Date (YYYY-MM-DD, UTC) of the latest run start in the row.")
    gym_versions: list[str] = Field(description="Gym versions of the runs in the row, sorted.")
    task_versions: dict[str, int] = Field(description="Version of every task in `results`, by task id.")
    runs: list[str] = Field(
        description=("Slugs of the runs merged into the row (when several, a task's best grade over all of them counts)."),
    )
    complete: bool = Field(
        description="False when some run in the row did not finish or left tasks without a graded attempt.",
    )
    results: list[TaskResult] = Field(description="The best result per task, sorted by task id.")
    dsls: list[Dsl] = Field(
        default_factory=list, description='The kernel languages of the row\'s results, sorted ("helion", "triton"); empty when it has none.'
    )
    unattempted: list[str] = Field(
        description=("Tasks the row's runs were configured with but never graded, sorted; they count in `aggregate.tasks` as neither correct nor fast."),
    )
    unconfirmed: list[str] = Field(
        default_factory=list,
        description=(
            "Tasks with a pass held back for want of a confirmation grade (its speedup is implausible by gym.grading.confirm's default threshold), "
            "sorted. Such a pass is never ranked: the task's best other attempt counts, and a task with no other attempt counts in "
            "`aggregate.tasks` as neither correct nor fast (and is not in `results`)."
        ),
    )


class Board(SiteModel):
    """One table of the index: one hardware kind and one scope (suites and contract).

    GPU rows and interpreted rows are never in the same board, and neither are rows whose
    runs covered different suites (ours and KernelBench's, say) or graded against different contracts."""

    id: str = Field(
        default="",
        description=(
            'Unique id of the board in the site, the HTML id of its section on the index ("board-gpu--l1", '
            '"board-gpu--kb-l1--contract-kernelbench"; see gym.site.schema.board_id). '
            'Derived from kind, suites and contract when absent (an older leaderboard.json: "board-<kind>").'
        ),
    )
    kind: BoardKind = Field(
        description="gpu (timed on a GPU) or interpreted (timed under the Triton interpreter on CPU).",
    )
    suites: list[str] = Field(
        default_factory=list,
        description=(
            "The sorted suites every row's runs were configured with: rows share a board only when these (and `contract`) are the same. "
            "Empty only in a leaderboard.json written before scopes were recorded."
        ),
    )
    contract: str | None = Field(
        default=None,
        description="The contract preset every row graded against instead of each task's own (e.g. \"kernelbench\"); None for the tasks' own.",
    )
    title: str = Field(description="Heading shown on the site: hardware kind, suites and contract.")
    rows: list[Row] = Field(
        description="Sorted by correct rate, then fast_1 vs eager, then geometric-mean speedup (all descending).",
    )

    @model_validator(mode="after")
    def _default_id(self) -> Board:
        if not self.id:
            self.id = board_id(self.kind, self.suites, self.contract)
        return self


class TaskPageInfo(SiteModel):
    """One task's page: what the task file says now, and what the runs graded."""

    id: str = Field(description='"<suite>/<name>".')
    url: str = Field(description="URL of the task's page.")
    present: bool = Field(
        description=(
            "True when the task is in one of the task roots (this checkout's tasks/, KGYM_TASKS, the imported-task root); False shows only what the runs recorded."
        ),
    )
    title: str | None = Field(description="Title from the task file (None when the task is gone).")
    description: str | None = Field(description="Description from the task file (None when the task is gone).")
    current_version: int | None = Field(description="The task file's version (None when the task is gone).")
    graded_versions: list[int] = Field(description="Task versions the runs graded, sorted.")
    contract: list[str] = Field(
        description=("The contract's checks, one line each as the agent's prompt shows them (empty when the task is gone)."),
    )
    note: str | None = Field(description="Why task details are missing or differ from the grades, when they do.")


class SubmissionInfo(SiteModel):
    """One graded attempt."""

    id: str = Field(description='Unique id: "<run slug>/<suite>/<name>/<attempt>".')
    url: str = Field(description="URL of the submission's page.")
    run: str = Field(description="Slug of its run.")
    task_id: str = Field(description='"<suite>/<name>".')
    task_version: int = Field(description="Task version the grade was made against.")
    attempt: int = Field(description="1-based attempt number within the task's episode.")
    status: Status = Field(description="The grade's status.")
    speedup_vs_eager: float | None = Field(
        description="Reference (eager PyTorch) time / kernel time; None when not measured.",
    )
    speedup_vs_compile: float | None = Field(description="torch.compile time / kernel time; None when not measured.")
    sol_fraction: float | None = Field(description="Fraction of the hardware's speed of light; None when not known.")
    hardware: str = Field(description='The GPU name, or "interpreted (CPU)".')
    kind: BoardKind = Field(description="The hardware kind: gpu or interpreted.")
    contract: str | None = Field(
        default=None,
        description="The contract preset the grade was made against (GradeResult.contract_preset); None for the task's own.",
    )
    integrity_flags: list[str] = Field(description="Integrity rules the attempt broke.")
    confirmation: ConfirmationState | None = Field(default=None, description=CONFIRMATION_DESCRIPTION)
    submission_sha256: str = Field(description="sha256 of the submitted file.")
    dsl: Dsl = Field(default="triton", description='The kernel language of the submission: "triton" or "helion" (GradeResult.dsl).')
    graded_at: str = Field(description="ISO-8601 UTC time the grade finished.")
    source: str | None = Field(description="URL of a copy of the submitted source; None when absent.")
    grade: str = Field(description="URL of a copy of the full grade (GradeResult JSON).")
    transcript: str | None = Field(description="URL of the agent transcript's page; None when there is none.")


class Leaderboard(SiteModel):
    schema_version: int = Field(
        default=LEADERBOARD_SCHEMA_VERSION,
        description="Version of this schema (see LEADERBOARD_SCHEMA_VERSION); readers should check it.",
    )
    boards: list[Board] = Field(
        description=(
            "The index tables, one per hardware kind and scope (suites and contract): GPU boards first, "
            "then boards of our suites before those holding KernelBench's (\"kb/...\"), then by suites, then contract (the tasks' own first)."
        ),
    )
    runs: list[RunInfo] = Field(description="Every run folder used, sorted by run_id.")
    tasks: list[TaskPageInfo] = Field(description="Every task some run graded, sorted by id.")
    submissions: list[SubmissionInfo] = Field(description="Every attempt shown, sorted by id.")


def read_leaderboard(path: Path) -> Leaderboard:
    """Read a built site's leaderboard.json (unknown keys ignored; a newer schema_version raises RecordVersionError)."""
    return read_record(path, Leaderboard)
