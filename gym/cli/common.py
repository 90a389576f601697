"""What every command module shares: the consoles, `fail(message, code)`, presets by name, the executor, task discovery, progress bars, printed grades and aggregates."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from gym.errors import MissingExtra
from gym.extras import require
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, reward_preset
from gym.schema.aggregates import Aggregate
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import LoadReport, discover
from gym.tasks.model import Task
from gym.tasks.splits import SPLITS

if TYPE_CHECKING:
    from gym.execution.executor import Executor


# The command's own output (stdout), and everything else a command says (stderr).
console = Console()
errors = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2, *, markup: bool = True, to: Console | None = None) -> NoReturn:
    """End the command: print `message` (rich markup unless `markup=False`) on stderr, or on `to`, and exit `code`
    (2: a usage error, 1: the command ran and failed)."""
    (to or errors).print(message, highlight=False, markup=markup)
    raise typer.Exit(code)


STATUS_STYLE = {
    Status.passed: "green",
    Status.wrong_answer: "red",
    Status.compile_error: "magenta",
    Status.runtime_error: "magenta",
    Status.timeout: "yellow",
    Status.rejected: "bold red",
    Status.infra_error: "bold yellow",
}


T = TypeVar("T")


def named_preset(option: str, make: Callable[[str], T], name: str) -> T:
    """`make(name)` (a preset by name), or exit 2 naming `option` and why the name is refused."""
    try:
        return make(name)
    except ValueError as error:
        why = error.errors()[0]["msg"].removeprefix("Value error, ") if isinstance(error, ValidationError) else str(error)
        fail(f"[red]{option}:[/] {escape(why)}")


def reward_config(name: str) -> RewardConfig:
    """The RewardConfig of preset `name`, or exit 2 with why not."""
    return named_preset("--reward", reward_preset, name)


def return_config(name: str) -> ReturnConfig:
    """The ReturnConfig named `name`, or exit 2 with why not."""
    return named_preset("--returns", as_return_config, name)


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """End the command with the one line naming the extra when `feature` lacks it (exit 1)."""
    try:
        require(extra, feature, *modules)
    except MissingExtra as error:
        exit_missing(error)


def exit_missing(error: MissingExtra) -> NoReturn:
    fail(str(error), 1, markup=False)


def with_preset(tasks: list[Task], contract: str | None) -> list[Task]:
    """The tasks with a contract preset in place of their own (exit 2 on an unknown preset)."""
    if contract is None:
        return tasks
    from gym.errors import ContractPresetError
    from gym.tasks.contract_presets import with_contract

    try:
        return [with_contract(task, contract) for task in tasks]
    except ContractPresetError as error:
        fail(f"[red]{error}[/]")


def cli_executor(name: str, ray_address: str | None, no_warm: bool, concurrency: int | None, sandbox: str) -> Executor:
    """The executor the command grades through (its concurrency: `concurrency`, else its own default)."""
    from gym.errors import ExecutorError
    from gym.execution import GradeOptions, make_executor

    settings: dict[str, object] = {"concurrency": concurrency, "warm": not no_warm, "options": GradeOptions(sandbox=sandbox, warm=not no_warm)}
    if name == "ray":
        settings["address"] = ray_address
    elif ray_address is not None:
        fail("[red]--ray-address needs --executor ray[/]")
    try:
        return make_executor(name, **settings)
    except MissingExtra as error:
        exit_missing(error)
    except ExecutorError as error:
        fail(f"[red]{escape(str(error))}[/]")


def discover_tasks(suite: str | None = None, include_degenerate: bool = False, split: str | None = None) -> LoadReport:
    """discover(), with a bad --split as a usage error."""
    if split is not None and split not in SPLITS:
        raise typer.BadParameter(f"{split!r}: the splits are {', '.join(SPLITS)}", param_hint="--split")
    return discover(suite=suite, include_degenerate=include_degenerate, split=split)


def report_broken(problems: list[str]) -> None:
    for problem in problems:
        errors.print(f"[yellow]skipped broken task:[/] {problem}", highlight=False)


def progress_bar(disable: bool) -> Progress:
    """The progress bar of every long command (on stderr, gone when done)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=errors, transient=True, disable=disable)


def print_grade(result: GradeResult, secret: int | None = None, verbose: bool = False) -> None:
    """A grade as a table and its feedback; the traceback trimmed to the submission's frames and interpreted
    timings without a speedup ratio unless `verbose` (the JSON is never changed)."""
    from gym.grading.feedback import write_feedback

    style = STATUS_STYLE[result.status]
    console.print(f"[bold]{result.task_id}[/] v{result.task_version}: [{style}]{result.status.value}[/] in {result.duration_s:.1f} s")
    if secret is not None:
        console.print(f"secret {secret} (--secret {secret} grades it again with the same inputs)", highlight=False)
    if result.trials:
        table = Table(show_header=True)
        for column in ("trial", "shape", "checks"):
            table.add_column(column)
        for trial in result.trials:
            checks = (
                "; ".join(f"[{'green' if c.passed else 'red'}]{c.kind}[/] {c.figure:.3g}" if c.figure is not None else f"{c.kind}" for c in trial.checks)
                or f"[red]{trial.error}[/]"
            )
            table.add_row(trial.label, "hidden" if trial.hidden else str(trial.shape), checks)
        console.print(table)
    console.print(result.feedback if verbose else write_feedback(result, human=True), highlight=False, markup=False)


def print_aggregate(summary: Aggregate) -> None:
    parts = [f"correct {summary.passed}/{summary.tasks} ({summary.correct_rate:.0%})"]
    for name, figures in (("eager", summary.eager), ("torch.compile", summary.compile)):
        fast = ", ".join(f"{label} {value:.0%}" for label, value in figures.fast.items())
        geomean = f"geomean {figures.geomean_speedup:.3g}x over {figures.geomean_count}" if figures.geomean_speedup is not None else "geomean n/a"
        parts.append(f"vs {name}: {fast}; {geomean}")
    if summary.median_sol_fraction is not None:
        parts.append(f"median speed-of-light fraction {summary.median_sol_fraction:.2f}")
    if set(summary.dsls) - {"triton"}:
        parts.append("kernel languages: " + ", ".join(f"{dsl} {count}" for dsl, count in summary.dsls.items()))
    console.print("\n".join(parts), highlight=False, soft_wrap=True)
    if summary.interpreted:
        console.print("Timings are [bold]interpreted[/] (Triton interpreter on CPU): they check the harness, not kernel speed.")


def check_dsl(dsl: str) -> None:
    """Exit 2 with a clear message for a --dsl that is not a kernel language the gym grades."""
    from gym.schema.result import DSLS

    if dsl not in DSLS:
        fail(f"[red]error:[/] --dsl must be one of {', '.join(DSLS)}, not {dsl!r}")
