"""`kgym list`, `kgym show` and `kgym check-tasks`: the tasks, one task's prompt, whether tasks are fit to grade."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from gym.cli.common import check_dsl, console, discover_tasks, errors, fail, progress_bar, report_broken, with_preset
from gym.cli.options import ContractOption, DslOption, JsonOption, SplitOption, SuiteOption
from gym.errors import TaskLoadError
from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task


def list_tasks(
    suite: SuiteOption = None,
    split: SplitOption = None,
    as_json: JsonOption = False,
    show_all: Annotated[bool, typer.Option("--all", help="Also the tasks check-tasks marked degenerate (left out of suites otherwise).")] = False,
) -> None:
    """List the tasks (broken task files are reported on stderr and skipped); --json adds each task's
    split and metadata (source, level, op kind, bench bytes and FLOPs, aten ops)."""
    from gym.tasks.metadata import task_metadata

    report = discover_tasks(suite=suite, include_degenerate=show_all, split=split)
    report_broken(report.errors)
    if as_json:
        rows = [
            {
                "id": task.id,
                "version": task.spec.version,
                "suite": task.suite,
                "title": task.spec.title,
                "params": task.spec.params,
                "dtypes": task.spec.dtypes,
                "gpu_only_dtypes": task.spec.gpu_only_dtypes,
                "contract": [check.kind for check in task.spec.contract],
                "degenerate": task.spec.degenerate,
                "split": task.split,
                "metadata": task_metadata(task).model_dump(),
            }
            for task in report.tasks
        ]
        print(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(report.tasks)} tasks" + (f" in suite {suite}" if suite else "") + (f" ({split} split)" if split else ""))
    columns = ["id", "title", "split", "dtypes", "contract"] + (["degenerate"] if show_all else [])
    for column in columns:
        # An id is copied into other commands: never cut or wrapped; the other columns wrap instead.
        if column == "id":
            table.add_column(column, no_wrap=True, min_width=max((len(task.id) for task in report.tasks), default=2))
        else:
            table.add_column(column, overflow="fold")
    for task in report.tasks:
        dtypes = ", ".join(task.spec.dtypes) + (f" (+{', '.join(task.spec.gpu_only_dtypes)} on GPU)" if task.spec.gpu_only_dtypes else "")
        row = [task.id, task.spec.title, str(task.split), dtypes, ", ".join(check.kind for check in task.spec.contract)]
        table.add_row(*row, *([escape(task.spec.degenerate or "")] if show_all else []))
    console.print(table)


def degenerate_warning(task: Task) -> str | None:
    """The warning `show` and `grade` print (stderr) for a task check-tasks marked degenerate; None otherwise."""
    if task.spec.degenerate is None:
        return None
    return (
        f"warning: {task.id} is marked degenerate by `kgym check-tasks`: {task.spec.degenerate}. It is left out of suites "
        "(`kgym list --all` shows it), and a grade of it says little about a kernel."
    )


def warn_if_degenerate(task: Task) -> None:
    warning = degenerate_warning(task)
    if warning is not None:
        errors.print(warning, style="yellow", highlight=False, markup=False)


def show(task: Annotated[str, typer.Argument(help="Task id, e.g. l1/softmax.")], dsl: DslOption = "triton") -> None:
    """Print the prompt an agent sees for TASK (hidden shapes are never shown); --dsl helion asks for
    Helion kernels (its example and rules in place of Triton's). A task check-tasks marked degenerate
    is shown with a warning on stderr."""
    from gym.tasks.prompt import render_prompt

    check_dsl(dsl)
    try:
        loaded = find_task(task)
    except TaskLoadError as error:
        fail(f"[red]error:[/] {error}")
    warn_if_degenerate(loaded)
    print(render_prompt(loaded, dsl=dsl), end="")  # type: ignore[arg-type]


def check_tasks(
    suite: SuiteOption = None,
    as_json: JsonOption = False,
    contract: ContractOption = None,
) -> None:
    """Validate tasks: deterministic, input- and weight-dependent references that trivial answers and a
    float16 reference fail. Imported tasks that fail are marked degenerate (left out of suites); exit 1
    when a shipped task fails."""
    from gym.grading.validation.task_validation import TaskCheck, mark_imported, validate_tasks

    report = discover(suite=suite, include_degenerate=True)
    report_broken(report.errors)
    tasks = report.tasks
    tasks = with_preset(tasks, contract)
    by_id = {task.id: task for task in report.tasks}
    with progress_bar(disable=as_json) as progress:
        bar = progress.add_task("checking tasks", total=len(tasks))

        def done(check: TaskCheck) -> None:
            progress.advance(bar)
            # A preset's verdict is about the preset, not the task: nothing is marked then.
            if contract is None:
                mark_imported(by_id[check.task_id], check)

        checks = validate_tasks(tasks, on_done=done)
    if as_json:
        print(json.dumps([json.loads(check.model_dump_json()) for check in checks], indent=2))
    else:
        table = Table(title=f"{len(checks)} tasks checked" + (f" against the {contract} contract" if contract else ""))
        for column in ("task", "verdict", "reasons"):
            table.add_column(column)
        for check in checks:
            verdict = "[green]ok[/]" if check.ok else ("[yellow]degenerate[/]" if by_id[check.task_id].spec.kernelbench else "[red]FAIL[/]")
            reasons = ", ".join(problem.reason for problem in check.problems) or ", ".join(f"({p.reason}: exempt)" for p in check.exempted)
            table.add_row(check.task_id, verdict, escape(reasons))
        console.print(table)
        for check in checks:
            for problem in check.problems:
                console.print(f"[bold]{check.task_id}[/] {problem.reason}: {escape(problem.detail)}", highlight=False)
    shipped_failed = [check for check in checks if not check.ok and by_id[check.task_id].spec.kernelbench is None]
    raise typer.Exit(1 if shipped_failed or report.errors else 0)
