"""`kgym baselines warm`: the cached reference baselines grades reuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from gym.cli.common import console, fail, progress_bar, report_broken
from gym.cli.options import JsonOption, SuiteOption
from gym.errors import TaskLoadError
from gym.tasks.loader import discover, find_task

baselines_app = typer.Typer(no_args_is_help=True, add_completion=False, help="The cached reference baselines (eager, torch.compile) grades reuse.")


@baselines_app.command("warm")
def baselines_warm(
    suite: SuiteOption = None,
    task_ids: Annotated[list[str] | None, typer.Option("--task", help="Only this task (repeatable; within --suite when both are given).")] = None,
    device: Annotated[str | None, typer.Option("--device", help='"cuda", "cuda:N" or "cpu" (default: CUDA when available).')] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Re-measure and overwrite entries already cached.")] = False,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="The cache folder (default KGYM_BASELINE_CACHE, else ~/.cache/kgym/baselines).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Measure and cache the reference baselines of every shape a grade would time on this device
    (GPU: the benchmark shapes; CPU: the first public shape), so later grades reuse them. Exit 1 if any failed."""
    import torch

    from gym.errors import BaselineCacheError
    from gym.grading.baselines.cache import BaselineCache
    from gym.grading.baselines.warm import WarmedBaseline, warm_baselines, warm_targets
    from gym.grading.grader import default_device

    try:
        chosen = torch.device(device) if device is not None else default_device()
    except RuntimeError as error:
        fail(f"[red]bad --device:[/] {escape(str(error))}")
    if chosen.type == "cuda" and not torch.cuda.is_available():
        fail("[red]--device cuda: no CUDA device is available[/]")
    if task_ids and suite is None:
        try:
            tasks = [find_task(task_id) for task_id in task_ids]
        except TaskLoadError as error:
            fail(f"[red]{error}[/]")
    else:
        report = discover(suite=suite)
        report_broken(report.errors)
        tasks = report.tasks
        if task_ids:
            unknown = sorted(set(task_ids) - {task.id for task in tasks})
            if unknown:
                fail(f"[red]not in {'suite ' + suite if suite else 'the task roots'}:[/] {', '.join(unknown)}")
            tasks = [task for task in tasks if task.id in task_ids]
    targets = warm_targets(tasks, chosen)
    if not targets:
        fail("[red]no tasks to warm[/]")
    cache = BaselineCache(cache_dir)
    with progress_bar(disable=as_json) as progress:
        bar = progress.add_task(f"baselines on {chosen}", total=len(targets))

        def done(row: WarmedBaseline) -> None:
            progress.advance(bar)
            if row.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{row.task_id} {row.trial}:[/] {escape(row.error or '')}", highlight=False)

        try:
            rows = warm_baselines(targets, chosen, fresh=fresh, cache=cache, on_done=done)
        except BaselineCacheError as error:
            fail(f"[red]{escape(str(error))}[/]")
    if as_json:
        print(json.dumps([row.model_dump(mode="json") for row in rows], indent=2))
    else:
        table = Table(title=f"Reference baselines on {chosen}")
        for column in ("task", "shape", "baseline", "eager ms", "compile ms", "rse", "reps"):
            table.add_column(column, justify="right" if column in {"eager ms", "compile ms", "rse", "reps"} else "left", no_wrap=column == "task")
        for row in rows:
            outcome = {"measured": "[green]measured[/]", "cached": f"cached {row.measured_at}", "failed": "[red]failed[/]"}[row.outcome]
            table.add_row(
                row.task_id,
                escape(f"{row.dtype} " + ", ".join(f"{name}={value}" for name, value in row.shape.items())),
                outcome,
                f"{row.eager_median_s * 1e3:.3g}" if row.eager_median_s is not None else "-",
                f"{row.compiled_median_s * 1e3:.3g}" if row.compiled_median_s is not None else "-",
                f"{row.rse:.2%}" if row.rse is not None else "-",
                str(row.reps) if row.reps is not None else "-",
            )
        console.print(table)
        console.print(f"{len(rows)} shapes of {len({row.task_id for row in rows})} tasks in {cache.root}", highlight=False, soft_wrap=True)
    raise typer.Exit(1 if any(row.outcome == "failed" for row in rows) else 0)
