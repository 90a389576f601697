"""From loaded runs to the `Leaderboard` data: rows, best results, submissions, tasks.

- A row is an (agent, model, hardware class, scope). A run's scope is the sorted
  set of suites its configured tasks belong to (a task's suite is its id before
  the last "/": "l1", "kb/l1") and the contract preset it graded against (None:
  each task's own). Runs of the same row are merged:
  per task, the newest task version graded wins, then the best grade by
  `gym.schema.ranking.better` (a pass beats any failure, then the higher speedup
  vs eager).
- Within a run, the grade that counts for a task is its episode's best attempt,
  chosen the same way.
- Row figures come from `gym.schema.aggregates.aggregate` over those best grades, so
  the site and the CLI share one definition; a task a row's runs were
  configured with but never graded counts as `unattempted` (neither correct
  nor fast), as in `kgym run`'s summary.
- A board is one hardware kind ("gpu", "interpreted") and one scope: two rows
  share a table only when their runs covered the same suites under the same
  contract, so our l1 rows and KernelBench's kb/l1 rows are never ranked
  together. Boards go GPU first, then our suites before KernelBench's ("kb/..."),
  then by suites, then contract (the tasks' own first).
- The confirmation gate (gym.grading.confirm, GPU MODE's secret-run gate): a pass
  whose speedup is implausible by the default threshold (above 3x vs
  torch.compile, or past speed of light) is ranked only when it carries a
  confirmation grade that reproduced it. One without is held back: its
  submission page shows it (marked "awaiting confirmation"), the row lists the
  task in `unconfirmed`, and the task's best other attempt counts instead (none:
  the task counts as neither correct nor fast). Confirmed results are marked.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass

from gym.grading.confirm import needs_confirmation
from gym.schema.aggregates import aggregate
from gym.schema.ranking import best_graded
from gym.schema.result import GradeResult, Status
from gym.site.hardware import HardwareClass, grade_hardware, run_hardware
from gym.site.load import LoadedAttempt, LoadedRun
from gym.site.schema import (
    Board,
    BoardKind,
    ConfirmationState,
    Leaderboard,
    Row,
    RunInfo,
    SubmissionInfo,
    SuiteSet,
    TaskResult,
    board_id,
    suite_of,
)
from gym.site.tasks import task_info
from gym.site.urls import submission_base, submission_id, submission_page, unique_slugs

BOARD_TITLES: dict[BoardKind, str] = {
    "gpu": "GPU runs",
    "interpreted": "Interpreted runs (CPU, Triton interpreter): correctness is real, timings are not GPU timings",
}

# The contract presets' names on the site (any other preset shows by its name).
CONTRACT_LABELS: dict[str, str] = {"kernelbench": "KernelBench tolerance"}

# What rows must share to be in one board: their runs' suites and contract preset.
Scope = tuple[SuiteSet, str | None]
BoardKey = tuple[BoardKind, SuiteSet, str | None]
# (agent, model, kind, hardware, suites, contract)
RowKey = tuple[str, str | None, BoardKind, str, SuiteSet, str | None]

KERNELBENCH_SUITE = "kb"


@dataclass(frozen=True)
class Graded:
    """One attempt placed in the site: its run, id and hardware class."""

    run: str
    id: str
    hardware: HardwareClass
    attempt: LoadedAttempt

    @property
    def grade(self) -> GradeResult:
        return self.attempt.grade


@dataclass
class SiteData:
    leaderboard: Leaderboard
    # Every attempt shown, by submission id.
    attempts: dict[str, Graded]


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def run_order(run: LoadedRun) -> tuple[str, str, str]:
    """Runs sort by id, then start, then content, so input order never changes the output."""
    digest = hashlib.sha256(run.manifest.model_dump_json().encode()).hexdigest()
    return run.manifest.run_id, run.manifest.started_at, digest


def confirmation_state(grade: GradeResult) -> ConfirmationState | None:
    """Where `grade` stands with the re-check of implausible speedups (see gym.site.schema.ConfirmationState)."""
    if grade.confirmation is not None:
        return "confirmed" if grade.confirmation.reproduced else "not_reproduced"
    return "unconfirmed" if needs_confirmation(grade) is not None else None


def held_back(grade: GradeResult) -> bool:
    """A pass that may not be ranked: its speedup needs a confirmation it lacks (or one that failed)."""
    return grade.status == Status.passed and confirmation_state(grade) in ("unconfirmed", "not_reproduced")


def best_of(candidates: list[Graded]) -> Graded:
    """The grade that counts: newest task version first, then `better` (earlier wins ties)."""
    newest = max(item.grade.task_version for item in candidates)
    best = best_graded((item for item in candidates if item.grade.task_version == newest), lambda item: item.grade)
    assert best is not None
    return best


def is_kernelbench(suite: str) -> bool:
    """A suite imported from KernelBench ("kb", "kb/l1", ...)."""
    return suite == KERNELBENCH_SUITE or suite.startswith(KERNELBENCH_SUITE + "/")


def run_scope(run: LoadedRun) -> Scope:
    """The suites of the run's configured tasks (of its graded ones when none are configured) and its contract preset."""
    tasks = run.manifest.config.tasks or [attempt.line.task_id for attempt in run.attempts]
    return tuple(sorted({suite_of(task_id) for task_id in tasks})), run.manifest.config.contract


def scope_order(suites: SuiteSet, contract: str | None) -> tuple[bool, SuiteSet, bool, str]:
    """Our suites before any scope holding KernelBench's, then by suites, then the tasks' own contract before presets."""
    return any(is_kernelbench(suite) for suite in suites), suites, contract is not None, contract or ""


def board_order(key: BoardKey) -> tuple[bool, tuple[bool, SuiteSet, bool, str]]:
    kind, suites, contract = key
    return kind != "gpu", scope_order(suites, contract)


def contract_label(contract: str | None) -> str:
    if contract is None:
        return "each task's own contract"
    label = CONTRACT_LABELS.get(contract)
    return f"{label} (contract {contract})" if label else f"contract {contract}"


def board_title(kind: BoardKind, suites: SuiteSet, contract: str | None) -> str:
    """E.g. "GPU runs · suites kb/l1 · KernelBench tolerance (contract kernelbench)"."""
    return f"{BOARD_TITLES[kind]} · suites {', '.join(suites) or '(none)'} · {contract_label(contract)}"


def row_name(key: RowKey) -> str:
    """What a row's id is made from: "<agent>--<model>--<hardware>--<suite>...[--contract-<preset>]"."""
    agent, model, _, hardware, suites, contract = key
    parts = [agent, model or "no-model", hardware, *(suite.replace("/", "-") for suite in suites)]
    if contract is not None:
        parts.append(f"contract-{contract}")
    return "--".join(parts)


def submission_info(item: Graded) -> SubmissionInfo:
    grade, line = item.grade, item.attempt.line
    base = submission_base(item.id)
    return SubmissionInfo(
        id=item.id,
        url=submission_page(item.id),
        run=item.run,
        task_id=line.task_id,
        task_version=grade.task_version,
        attempt=line.attempt,
        status=grade.status,
        speedup_vs_eager=finite(grade.speedup_vs_eager),
        speedup_vs_compile=finite(grade.speedup_vs_compile),
        sol_fraction=finite(grade.sol_fraction),
        hardware=item.hardware[1],
        kind=item.hardware[0],
        contract=grade.contract_preset,
        integrity_flags=list(grade.integrity_flags),
        confirmation=confirmation_state(grade),
        submission_sha256=grade.submission_sha256,
        dsl=grade.dsl,
        graded_at=grade.graded_at,
        source=base + ".py" if item.attempt.source is not None else None,
        grade=base + ".grade.json",
        transcript=base + ".transcript.html" if item.attempt.transcript is not None else None,
    )


def run_info(run: LoadedRun, slug: str, hardware: HardwareClass, scope: Scope) -> RunInfo:
    manifest = run.manifest
    graded_tasks = {attempt.line.task_id for attempt in run.attempts}
    return RunInfo(
        slug=slug,
        run_id=manifest.run_id,
        agent=manifest.config.agent,
        model=manifest.config.model,
        suite=manifest.config.suite,
        suites=list(scope[0]),
        contract=scope[1],
        hardware=hardware[1],
        kind=hardware[0],
        gym_version=manifest.gym_version,
        started_at=manifest.started_at,
        ended_at=manifest.ended_at,
        complete=manifest.ended_at is not None and set(manifest.config.tasks) <= graded_tasks,
        task_versions=dict(sorted(manifest.task_versions.items())),
        environment=manifest.environment,
        attempts=len(run.attempts),
        problems=list(run.problems),
    )


def build_row(row_id: str, key: RowKey, items: list[Graded], runs: dict[str, RunInfo], configured: set[str]) -> Row:
    """`configured`: the tasks the row's runs were configured with (graded or not). A pass held back
    for want of a confirmation (`held_back`) is never a task's result."""
    agent, model, kind, hardware, suites, contract = key
    every: dict[str, list[Graded]] = defaultdict(list)
    by_task: dict[str, list[Graded]] = defaultdict(list)
    unconfirmed: set[str] = set()
    for item in items:
        task_id = item.attempt.line.task_id
        every[task_id].append(item)
        if held_back(item.grade):
            unconfirmed.add(task_id)
        else:
            by_task[task_id].append(item)
    results: list[TaskResult] = []
    best_grades: list[GradeResult] = []
    for task_id in sorted(by_task):
        best = best_of(by_task[task_id])
        grade = best.grade
        best_grades.append(grade)
        results.append(
            TaskResult(
                task_id=task_id,
                task_version=grade.task_version,
                status=grade.status,
                speedup_vs_eager=finite(grade.speedup_vs_eager),
                speedup_vs_compile=finite(grade.speedup_vs_compile),
                sol_fraction=finite(grade.sol_fraction),
                integrity_flags=list(grade.integrity_flags),
                confirmation=confirmation_state(grade),
                submission=best.id,
                url=submission_page(best.id),
                attempts=sum(1 for item in every[task_id] if item.run == best.run),
                dsl=grade.dsl,
            )
        )
    row_runs = sorted({item.run for item in items})
    infos = [runs[slug] for slug in row_runs]
    return Row(
        id=row_id,
        agent=agent,
        model=model,
        hardware=hardware,
        kind=kind,
        suites=list(suites),
        contract=contract,
        # Tasks without a ranked attempt (never graded, or only held-back passes) count as neither correct nor fast.
        aggregate=aggregate(best_grades, unattempted=len((configured | unconfirmed) - set(by_task))),
        date=max(info.started_at for info in infos)[:10],
        gym_versions=sorted({info.gym_version for info in infos}),
        task_versions={result.task_id: result.task_version for result in results},
        runs=row_runs,
        complete=all(info.complete for info in infos),
        results=results,
        dsls=sorted({result.dsl for result in results}),
        unattempted=sorted(configured - set(every)),
        unconfirmed=sorted(unconfirmed),
    )


def row_rank(row: Row) -> tuple[float, float, float, str, str, str]:
    figures = row.aggregate
    return (
        -figures.correct_rate,
        -figures.eager.fast["fast_1"],
        -(figures.eager.geomean_speedup or 0.0),
        row.agent,
        row.model or "",
        row.hardware,
    )


def build_site_data(loaded: list[LoadedRun]) -> SiteData:
    runs_sorted = sorted(loaded, key=run_order)
    slugs = unique_slugs(run.manifest.run_id for run in runs_sorted)
    run_infos: dict[str, RunInfo] = {}
    graded: dict[str, Graded] = {}
    groups: dict[RowKey, list[Graded]] = defaultdict(list)
    configured: dict[RowKey, set[str]] = defaultdict(set)
    for run, slug in zip(runs_sorted, slugs):
        hardware = run_hardware(run.manifest, [attempt.grade for attempt in run.attempts])
        suites, contract = scope = run_scope(run)
        run_infos[slug] = run_info(run, slug, hardware, scope)
        config = run.manifest.config
        # A configured task without any graded attempt counts against the run's row (as in `kgym run`'s summary).
        configured[(config.agent, config.model, hardware[0], hardware[1], suites, contract)].update(config.tasks)
        for attempt in run.attempts:
            item_id = submission_id(slug, attempt.line.task_id, attempt.line.attempt)
            item = Graded(run=slug, id=item_id, hardware=grade_hardware(attempt.grade) or hardware, attempt=attempt)
            graded[item_id] = item
            groups[(config.agent, config.model, item.hardware[0], item.hardware[1], suites, contract)].append(item)
    keys = sorted(groups, key=lambda key: (board_order((key[2], key[4], key[5])), key[0], key[1] or "", key[3]))
    row_ids = unique_slugs(row_name(key) for key in keys)
    rows = [build_row(row_id, key, groups[key], run_infos, configured[key]) for row_id, key in zip(row_ids, keys)]
    by_board: dict[BoardKey, list[Row]] = defaultdict(list)
    for key, row in zip(keys, rows):
        by_board[(key[2], key[4], key[5])].append(row)
    board_keys = sorted(by_board, key=board_order)
    board_ids = unique_slugs(board_id(kind, suites, contract) for kind, suites, contract in board_keys)
    boards = [
        Board(
            id=identifier,
            kind=kind,
            suites=list(suites),
            contract=contract,
            title=board_title(kind, suites, contract),
            rows=sorted(by_board[(kind, suites, contract)], key=row_rank),
        )
        for identifier, (kind, suites, contract) in zip(board_ids, board_keys)
    ]
    versions: dict[str, set[int]] = defaultdict(set)
    for item in graded.values():
        versions[item.attempt.line.task_id].add(item.grade.task_version)
    leaderboard = Leaderboard(
        boards=boards,
        runs=[run_infos[slug] for slug in sorted(run_infos)],
        tasks=[task_info(task_id, sorted(versions[task_id])) for task_id in sorted(versions)],
        submissions=[submission_info(graded[item_id]) for item_id in sorted(graded)],
    )
    return SiteData(leaderboard=leaderboard, attempts=graded)
