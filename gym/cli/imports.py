"""`kgym import kernelbench | opinfo | models`: problems from other benchmarks as tasks.

Imports are quiet: the warnings and log records the libraries they run raise (torch's OpInfo
database, transformers' deprecations) are collected by `quiet_libraries` and shown only with
`--verbose` (a count of them is printed otherwise). Each summary adds up: its outcomes sum to the
entries considered, and the lines under it give every excluded and every failed entry by reason
(`outcome_lines`), each reason's count the number of names it lists.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from gym.cli.common import console, errors, fail, progress_bar
from gym.cli.options import JsonOption
from gym.log import ROOT as GYM_LOGGER
from gym.tasks.splits import SPLITS

import_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Import problems from other benchmarks as tasks.")

VerboseOption = Annotated[bool, typer.Option("--verbose", "-v", help="Also print the warnings and log lines of the libraries the import runs.")]
ReportOption = Annotated[
    bool,
    typer.Option("--report", help="Then print the task root's diversity: valid tasks and distinct aten ops and fusion patterns by source and split."),
]

# Names listed per reason before "...".
LISTED = 12


@contextmanager
def quiet_libraries(verbose: bool) -> Iterator[list[str]]:
    """Collect the Python warnings and the log records of every logger but the gym's own (`kgym.*`)
    raised inside, as one line each (`verbose`: let them print as they come, collect nothing)."""
    captured: list[str] = []
    if verbose:
        yield captured
        return
    call_handlers = logging.Logger.callHandlers

    def collect(logger: logging.Logger, record: logging.LogRecord) -> None:
        if logger.name == GYM_LOGGER or logger.name.startswith(GYM_LOGGER + "."):
            call_handlers(logger, record)
        else:
            captured.append(f"{record.levelname.lower()} [{record.name}] {record.getMessage()}")

    with warnings.catch_warnings(record=True) as caught:
        logging.Logger.callHandlers = collect  # type: ignore[method-assign,assignment]
        try:
            yield captured
        finally:
            logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
            captured += [f"{item.category.__name__}: {item.message} ({item.filename}:{item.lineno})" for item in caught]


def report_hidden(captured: list[str]) -> None:
    """One line on stderr saying how many library warnings an import kept quiet."""
    if captured:
        distinct = len(set(captured))
        errors.print(f"{len(captured)} library warning(s) and log line(s) ({distinct} distinct) hidden: --verbose shows them", highlight=False)


def outcome_lines(entries: Iterable[tuple[str, str | None, str]], listed: int = LISTED) -> list[str]:
    """The entries left out, by outcome then reason: `(outcome, reason, name)` triples in, one line per
    (excluded or failed, reason) out, largest first, e.g. "failed, scaling (3): a, b, c". The counts of
    an outcome's lines sum to that outcome's count."""
    groups: dict[tuple[str, str], list[str]] = {}
    for outcome, reason, name in entries:
        if outcome in ("excluded", "failed"):
            groups.setdefault((outcome, reason or "no reason given"), []).append(name)
    order = sorted(groups.items(), key=lambda item: (item[0][0] != "failed", -len(item[1]), item[0][1]))
    return [f"{outcome}, {reason} ({len(names)}): {', '.join(names[:listed])}{', ...' if len(names) > listed else ''}" for (outcome, reason), names in order]


def outcome_counts(outcomes: list[str], kinds: tuple[str, ...]) -> str:
    """ "5 new, 0 updated, ..." for every kind (each outcome is one of `kinds`, so the counts sum to the total)."""
    unknown = sorted(set(outcomes) - set(kinds))
    assert not unknown, f"outcomes {unknown} are not among {kinds}"
    return ", ".join(f"{outcomes.count(kind)} {kind}" for kind in kinds)


def print_diversity(root: Path, as_json: bool, verbose: bool, imported: dict[str, Any] | None = None) -> None:
    """`--report`: the root's diversity (gym.tasks.diversity: tasks, distinct aten ops and fusion patterns
    by source and split, leaked families) after the summary; with --json one object, the import's
    report under "import" and the diversity under "diversity"."""
    from gym.tasks.diversity import diversity_report

    with quiet_libraries(verbose) as captured:
        diversity = diversity_report(root)
    report_hidden(captured)
    if as_json:
        print(json.dumps({"import": imported, "diversity": diversity.model_dump(mode="json")}, indent=2))
        return
    console.print("", *diversity.lines(), sep="\n", highlight=False, markup=False)


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise typer.BadParameter(f"{text!r}: levels are comma-separated numbers, e.g. 1,2,3") from None
    if not levels or any(level not in (1, 2, 3) for level in levels):
        raise typer.BadParameter(f"{text!r}: levels 1, 2 and 3 can be imported (level 4 loads Hugging Face models)")
    return levels


@import_app.command("kernelbench")
def import_kernelbench(
    path: Annotated[Path, typer.Argument(help="A KernelBench checkout (git clone https://github.com/ScalingIntelligence/KernelBench).")],
    levels: Annotated[str, typer.Option("--levels", help="Comma-separated levels to import.")] = "1,2,3",
    out: Annotated[Path | None, typer.Option("--out", help="Task root to write into (default: the user root, see `kgym list`).")] = None,
    as_json: JsonOption = False,
    verbose: VerboseOption = False,
    report_diversity: ReportOption = False,
) -> None:
    """Write KernelBench problems as task folders (kb/l1/19_relu, ...) into a task root outside the repo."""
    from gym.errors import ProblemError
    from gym.tasks.kernelbench.importer import ProblemImport, import_checkout
    from gym.tasks.paths import user_tasks_dir

    chosen = _levels(levels)
    root = (out or user_tasks_dir()).expanduser().resolve()
    from gym.tasks.kernelbench.importer import find_problems

    total = len(find_problems(path.expanduser().resolve(), chosen)) if path.is_dir() else 0
    with progress_bar(disable=as_json) as progress:
        bar = progress.add_task("importing KernelBench problems", total=total or None)

        def done(problem: ProblemImport) -> None:
            progress.advance(bar)
            if problem.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(problem.source_path)}:[/] {escape(problem.reason or '')}", highlight=False)

        try:
            with quiet_libraries(verbose) as captured:
                report = import_checkout(path.expanduser(), root, chosen, on_problem=done)
        except ProblemError as error:
            fail(f"[red]error:[/] {escape(str(error))}")
    report_hidden(captured)
    if as_json and not report_diversity:
        print(report.model_dump_json(indent=2))
    elif not as_json:
        counts = outcome_counts([problem.outcome for problem in report.problems], ("new", "updated", "unchanged", "failed"))
        console.print(f"{len(report.problems)} problems from {report.checkout} (commit {report.commit or 'unknown'}) into {root}: {counts}")
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite kb  (marks problems unfit to grade as degenerate)")
    _record_splits(root, [problem.task_id for problem in report.problems if problem.task_id and problem.outcome != "failed"], as_json)
    if report_diversity:
        print_diversity(root, as_json, verbose, report.model_dump(mode="json"))
    raise typer.Exit(1 if report.count("failed") else 0)


def _record_splits(root: Path, task_ids: list[str], quiet: bool) -> None:
    """Write the imported tasks' splits into the root's splits.json (existing entries never change)."""
    from gym.tasks.metadata import measure_family
    from gym.tasks.splits import SPLITS_FILE, record_splits, split_counts

    recorded = record_splits(root, task_ids, measure=measure_family)
    if quiet or not task_ids:
        return
    counts = split_counts(task_ids, recorded.tasks)
    text = "; ".join(f"{stratum}: " + ", ".join(f"{row[name]} {name}" for name in SPLITS) for stratum, row in sorted(counts.items()))
    console.print(f"splits ({root / SPLITS_FILE}): {text}", highlight=False)


@import_app.command("opinfo")
def import_opinfo_command(
    ops: Annotated[list[str] | None, typer.Argument(help="OpInfo names to import (e.g. add nn.functional.gelu max.binary); all when none.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Task root to write into (default: the user root, see `kgym list`).")] = None,
    as_json: JsonOption = False,
    verbose: VerboseOption = False,
    report_diversity: ReportOption = False,
) -> None:
    """Write PyTorch's OpInfo ops as task folders (opinfo/add, opinfo/max__binary, ...) into a task root
    outside the repo; ops that cannot be a kernel task are named with their reason. Needs the opinfo extra."""
    from gym.errors import ProblemError
    from gym.tasks.opinfo.importer import OpImport, import_opinfo, load_entries, select_entries
    from gym.tasks.paths import user_tasks_dir

    root = (out or user_tasks_dir()).expanduser().resolve()
    try:
        with quiet_libraries(verbose) as captured:
            total = len(select_entries(load_entries(), ops or None))
    except ProblemError as error:
        fail(f"[red]error:[/] {escape(str(error))}")
    with progress_bar(disable=as_json) as progress:
        bar = progress.add_task("importing OpInfo ops", total=total)

        def done(op: OpImport) -> None:
            progress.advance(bar)
            if op.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(op.op)}:[/] {escape(op.reason or '')}: {escape(op.detail or '')}", highlight=False)

        with quiet_libraries(verbose) as more:
            report = import_opinfo(root, ops or None, on_op=done)
    report_hidden(captured + more)
    if as_json and not report_diversity:
        print(report.model_dump_json(indent=2))
    elif not as_json:
        counts = outcome_counts([op.outcome for op in report.ops], ("new", "updated", "unchanged", "excluded", "failed"))
        console.print(f"{len(report.ops)} OpInfo entries of torch {report.torch_version} into {root}: {counts}")
        for line in outcome_lines((op.outcome, op.reason, op.op) for op in report.ops):
            console.print(f"  {escape(line)}", highlight=False)
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite opinfo  (marks tasks unfit to grade as degenerate)")
    _record_splits(root, [op.task_id for op in report.ops if op.task_id and op.outcome in ("new", "updated", "unchanged")], as_json)
    if report_diversity:
        print_diversity(root, as_json, verbose, report.model_dump(mode="json"))
    raise typer.Exit(1 if report.count("failed") else 0)


@import_app.command("models")
def import_models_command(
    names: Annotated[list[str] | None, typer.Argument(help="Architectures to trace (e.g. llama2_7b resnet50); all when none.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Task root to write into (default: the user root, see `kgym list`).")] = None,
    layers: Annotated[
        int | None, typer.Option("--layers", min=1, help="Trace this many blocks instead of the published count (faster; shifts shares).")
    ] = None,
    as_json: JsonOption = False,
    verbose: VerboseOption = False,
    report_diversity: ReportOption = False,
) -> None:
    """Trace real architectures (transformers configs at published sizes, meta device, no download) and write
    the ops carrying most of each model's modelled time as tasks models/<model>/<op>_<rank>. Needs the models extra."""
    from gym.errors import ProblemError
    from gym.tasks.models.architectures import ARCHITECTURES
    from gym.tasks.models.importer import ModelOpImport, import_models
    from gym.tasks.paths import user_tasks_dir

    root = (out or user_tasks_dir()).expanduser().resolve()
    with progress_bar(disable=as_json) as progress:
        bar = progress.add_task("importing model ops", total=None)

        def done(op: ModelOpImport) -> None:
            progress.advance(bar)
            if op.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(op.model)} {escape(op.op)}:[/] {escape(op.reason or '')}", highlight=False)

        try:
            with quiet_libraries(verbose) as captured:
                report = import_models(root, names or None, layers, on_op=done)
        except ProblemError as error:
            fail(f"[red]error:[/] {escape(str(error))}")
    report_hidden(captured)
    if as_json and not report_diversity:
        print(report.model_dump_json(indent=2))
    elif not as_json:
        counts = outcome_counts([op.outcome for op in report.ops], ("new", "updated", "unchanged", "excluded", "failed"))
        kinds: Counter[str] = Counter(op.kind for op in report.ops)
        labels = {"forward": ("op group", "op groups"), "fusion": ("fusion", "fusions"), "backward": ("backward pass", "backward passes")}
        considered = ", ".join(f"{kinds[kind]} {labels[kind][0 if kinds[kind] == 1 else 1]}" for kind in labels if kinds[kind])
        console.print(
            f"{len(report.ops)} candidates ({considered or 'none'}) of {len(report.models)} traced models and decode steps "
            f"({', '.join(report.models or names or ARCHITECTURES)}) into {root}: {counts}",
            highlight=False,
        )
        for line in outcome_lines((op.outcome, op.reason, f"{op.model} {op.op}") for op in report.ops):
            console.print(f"  {escape(line)}", highlight=False)
        for model, covered in report.models.items():
            console.print(f"  {model}: its tasks cover {covered:.0%} of its modelled forward time", highlight=False)
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite models  (marks tasks unfit to grade as degenerate)")
    _record_splits(root, [op.task_id for op in report.ops if op.task_id and op.outcome in ("new", "updated", "unchanged")], as_json)
    if report_diversity:
        print_diversity(root, as_json, verbose, report.model_dump(mode="json"))
    raise typer.Exit(1 if report.count("failed") else 0)


def _default_roots() -> list[Path]:
    from gym.tasks.paths import task_roots

    return task_roots()
