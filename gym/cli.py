"""`kgym`: a thin command-line shell over the library."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from gym.aggregates import aggregate
from gym.result import GradeResult, Status
from gym.sandbox import DEFAULT_SANDBOX
from gym.task_loader import TaskLoadError, discover, find_task

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Kernel Gym: grade Triton kernels against PyTorch references.")
console = Console()
errors = Console(stderr=True, soft_wrap=True)

STATUS_STYLE = {
    Status.passed: "green",
    Status.wrong_answer: "red",
    Status.compile_error: "magenta",
    Status.runtime_error: "magenta",
    Status.timeout: "yellow",
    Status.rejected: "bold red",
    Status.infra_error: "bold yellow",
}

SuiteOption = Annotated[Optional[str], typer.Option("--suite", help="Only tasks of this suite (the folder under tasks/).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
SandboxOption = Annotated[str, typer.Option("--sandbox", help="Where the submission runs: bwrap (default), docker, or process (unsafe, debugging only).")]


def _report_broken(problems: list[str]) -> None:
    for problem in problems:
        errors.print(f"[yellow]skipped broken task:[/] {problem}", highlight=False)


@app.command("list")
def list_tasks(suite: SuiteOption = None, as_json: JsonOption = False) -> None:
    """List the tasks (broken task files are reported on stderr and skipped)."""
    report = discover(suite=suite)
    _report_broken(report.errors)
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
            }
            for task in report.tasks
        ]
        print(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(report.tasks)} tasks" + (f" in suite {suite}" if suite else ""))
    for column in ("id", "title", "dtypes", "contract"):
        table.add_column(column)
    for task in report.tasks:
        dtypes = ", ".join(task.spec.dtypes) + (f" (+{', '.join(task.spec.gpu_only_dtypes)} on GPU)" if task.spec.gpu_only_dtypes else "")
        table.add_row(task.id, task.spec.title, dtypes, ", ".join(check.kind for check in task.spec.contract))
    console.print(table)


@app.command()
def show(task: Annotated[str, typer.Argument(help="Task id, e.g. l1/softmax.")]) -> None:
    """Print the prompt an agent sees for TASK (hidden shapes are never shown)."""
    from gym.prompt import render_prompt

    try:
        loaded = find_task(task)
    except TaskLoadError as error:
        errors.print(f"[red]error:[/] {error}", highlight=False)
        raise typer.Exit(2) from None
    print(render_prompt(loaded), end="")


def _print_grade(result: GradeResult) -> None:
    style = STATUS_STYLE[result.status]
    console.print(f"[bold]{result.task_id}[/] v{result.task_version}: [{style}]{result.status.value}[/] in {result.duration_s:.1f} s")
    if result.trials:
        table = Table(show_header=True)
        for column in ("trial", "shape", "checks"):
            table.add_column(column)
        for trial in result.trials:
            checks = "; ".join(
                f"[{'green' if c.passed else 'red'}]{c.kind}[/] {c.figure:.3g}" if c.figure is not None else f"{c.kind}"
                for c in trial.checks
            ) or f"[red]{trial.error}[/]"
            table.add_row(trial.label, "hidden" if trial.hidden else str(trial.shape), checks)
        console.print(table)
    console.print(result.feedback, highlight=False, markup=False)


@app.command("grade")
def grade_command(
    task: Annotated[str, typer.Argument(help="Task id, e.g. l1/softmax.")],
    file: Annotated[Path, typer.Argument(help="The submission: a Python file defining kernel(...).")],
    as_json: JsonOption = False,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
    keep_job: Annotated[Optional[Path], typer.Option("--keep-job", help="Copy the worker's job folder here (debugging).")] = None,
) -> None:
    """Grade FILE against TASK. Exit status 0 only when the grade is `passed`."""
    from gym.grader import grade

    result = grade(task, file, sandbox=sandbox, keep_job=keep_job)
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        _print_grade(result)
    raise typer.Exit(0 if result.status == Status.passed else 1)


@app.command()
def solutions(
    suite: SuiteOption = None,
    parallel: Annotated[int, typer.Option("--parallel", "-j", min=1, help="Grades run at once.")] = 2,
    as_json: JsonOption = False,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
) -> None:
    """Grade every task's shipped solution.py and print a table (exit 1 if any fails)."""
    from gym.batch import grade_many

    report = discover(suite=suite)
    _report_broken(report.errors)
    jobs = [(task, task.solution_path) for task in report.tasks]
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=errors, transient=True, disable=as_json,
    ) as progress:
        bar = progress.add_task("grading shipped solutions", total=len(jobs))
        results = grade_many(jobs, parallel=parallel, sandbox=sandbox, on_done=lambda task, result: progress.advance(bar))
    if as_json:
        print(json.dumps([json.loads(result.model_dump_json()) for result in results], indent=2))
    else:
        table = Table(title=f"Shipped solutions ({len(results)} tasks)")
        for column in ("task", "status", "trials", "candidate ms", "reference ms", "speedup", "grade s"):
            table.add_column(column, justify="right" if column not in {"task", "status"} else "left")
        for result in results:
            timings = result.timings
            table.add_row(
                result.task_id,
                f"[{STATUS_STYLE[result.status]}]{result.status.value}[/]",
                str(len(result.trials)),
                f"{timings.candidate.median_s * 1e3:.3g}" if timings and timings.candidate else "-",
                f"{timings.reference.median_s * 1e3:.3g}" if timings and timings.reference else "-",
                f"{result.speedup_vs_eager:.3g}x" if result.speedup_vs_eager else "-",
                f"{result.duration_s:.1f}",
            )
        console.print(table)
        summary = aggregate(results)
        geomean = summary.eager.geomean_speedup
        console.print(
            f"correct {summary.passed}/{summary.tasks} ({summary.correct_rate:.0%}); "
            + ", ".join(f"{label} {value:.0%}" for label, value in summary.eager.fast.items())
            + " vs eager; geomean speedup "
            + (f"{geomean:.3g}x over {summary.eager.geomean_count} tasks" if geomean is not None else "n/a")
        )
        if any(result.timings and result.timings.interpreted for result in results):
            console.print("Timings are [bold]interpreted[/] (Triton interpreter on CPU): they check the harness, not kernel speed.")
        for result in results:
            if result.status != Status.passed:
                console.print(f"\n[bold]{result.task_id}[/]:\n{result.feedback}", highlight=False)
    failed = [result for result in results if result.status != Status.passed]
    raise typer.Exit(1 if failed or report.errors else 0)


@app.command()
def doctor(
    quick: Annotated[bool, typer.Option("--quick", help="Skip the end-to-end grade of l1/vector_add.")] = False,
) -> None:
    """Versions, GPU, sandbox backends, task files, and one end-to-end grade."""
    from gym.doctor import diagnose

    findings = diagnose(smoke_grade=not quick)
    table = Table(title="kgym doctor")
    table.add_column("check")
    table.add_column("")
    table.add_column("detail")
    for finding in findings:
        mark = {True: "[green]ok[/]", False: "[red]FAIL[/]", None: ""}[finding.ok]
        table.add_row(finding.name, mark, finding.detail)
    console.print(table)
    raise typer.Exit(1 if any(finding.ok is False for finding in findings) else 0)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
