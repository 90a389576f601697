"""`kgym grade` (one submission) and `kgym solutions` (every shipped solution)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gym.cli.common import STATUS_STYLE, check_dsl, cli_executor, console, errors, fail, print_aggregate, print_grade, progress_bar, report_broken
from gym.cli.options import (
    ContractOption,
    DslOption,
    ExecutorOption,
    FreshBaselinesOption,
    JsonOption,
    NoWarmOption,
    RayAddressOption,
    SandboxOption,
    SuiteOption,
)
from gym.cli.tasks import warn_if_degenerate
from gym.errors import TaskLoadError
from gym.grading.options import GradeOptions
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.aggregates import aggregate
from gym.schema.result import Status
from gym.tasks.loader import discover, find_task


def grade_command(
    task: Annotated[str, typer.Argument(help="Task id, e.g. l1/softmax.")],
    file: Annotated[Path, typer.Argument(help="The submission: a Python file defining kernel(...) (KernelBench tasks: or class ModelNew).")],
    as_json: JsonOption = False,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
    keep_job: Annotated[Path | None, typer.Option("--keep-job", help="Copy the worker's job folder here (debugging).")] = None,
    contract: ContractOption = None,
    fresh_baselines: FreshBaselinesOption = False,
    gpu_profile: Annotated[
        str,
        typer.Option(
            "--gpu-profile", help='The GPU profile traffic is modelled on ("H100 SXM", "A100", "L4", "MI300X", ...: gym/grading/timing/gpu_profiles.toml).'
        ),
    ] = "H100 SXM",
    profile: Annotated[
        str | None,
        typer.Option("--profile", help='"ncu": also Nsight Compute\'s speed-of-light figures of one replay (GPU, ncu installed, counters readable).'),
    ] = None,
    no_confirm: Annotated[
        bool, typer.Option("--no-confirm", help="Do not re-grade a pass with an implausible speedup before it is reported (gym.grading.confirm).")
    ] = False,
    secret: Annotated[
        int | None,
        typer.Option(
            "--secret",
            min=0,
            help="The grade's secret (mixed into every input seed): the same secret grades the same inputs again. Default: a fresh one, printed.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="The full traceback and feedback, as the JSON has them.")] = False,
) -> None:
    """Grade FILE against TASK. Exit status 0 only when the grade is `passed`."""
    from gym.execution.local import LocalExecutor
    from gym.tasks.inputs import new_secret

    if profile not in (None, "ncu"):
        fail(f'[red]--profile takes "ncu", not {profile!r}[/]', to=console)
    options = GradeOptions(
        sandbox=sandbox, contract=contract, fresh_baselines=fresh_baselines, gpu_profile=gpu_profile, profile="ncu" if profile else None, confirm=not no_confirm
    )
    try:
        warn_if_degenerate(find_task(task))
    except TaskLoadError:
        pass  # the grade reports it
    chosen_secret = new_secret() if secret is None else secret
    executor = LocalExecutor(concurrency=1, warm=False)
    try:
        result = executor.grade(task, file, options, keep_job=keep_job, secret=chosen_secret)
    finally:
        executor.close()
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        print_grade(result, secret=chosen_secret, verbose=verbose)
    if result.degenerate_task:
        errors.print(
            f"warning: the grade found {task} degenerate ({result.degenerate_task}): the grade is masked, not a verdict on the kernel; "
            "`kgym check-tasks` marks such tasks",
            style="yellow",
            highlight=False,
            markup=False,
        )
    raise typer.Exit(0 if result.status == Status.passed else 1)


def solutions(
    suite: SuiteOption = None,
    parallel: Annotated[
        int | None, typer.Option("--parallel", "-j", min=1, help="Grades run at once (default: the GPUs on a GPU host, the cores on CPU).")
    ] = None,
    as_json: JsonOption = False,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
    fresh_baselines: FreshBaselinesOption = False,
    executor_name: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    no_warm: NoWarmOption = False,
    dsl: DslOption = "triton",
) -> None:
    """Grade every task's shipped solution.py (with --dsl helion: each solution_helion.py) and print a table (exit 1 if any fails)."""
    from gym.execution.batch import grade_many

    check_dsl(dsl)
    report = discover(suite=suite)
    report_broken(report.errors)
    jobs = [(task, task.solution_for(dsl)) for task in report.tasks if task.solution_for(dsl).is_file()]
    executor = cli_executor(executor_name, ray_address, no_warm, parallel, sandbox)
    try:
        with progress_bar(disable=as_json) as progress:
            bar = progress.add_task(f"grading shipped {'' if dsl == 'triton' else dsl + ' '}solutions", total=len(jobs))
            results = grade_many(
                jobs,
                sandbox=sandbox,
                on_done=lambda task, result: progress.advance(bar),
                fresh_baselines=fresh_baselines,
                executor=executor,
                warm=not no_warm,
            )
    finally:
        executor.close()
    if as_json:
        print(json.dumps([json.loads(result.model_dump_json()) for result in results], indent=2))
    else:
        table = Table(title=f"Shipped {'' if dsl == 'triton' else dsl.capitalize() + ' '}solutions ({len(results)} tasks)")
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
                "interpreted" if timings and timings.interpreted else (f"{result.speedup_vs_eager:.3g}x" if result.speedup_vs_eager else "-"),
                f"{result.duration_s:.1f}",
            )
        console.print(table)
        print_aggregate(aggregate(results))
        for result in results:
            if result.status != Status.passed:
                console.print(f"\n[bold]{result.task_id}[/]:\n{result.feedback}", highlight=False)
    failed = [result for result in results if result.status != Status.passed]
    raise typer.Exit(1 if failed or report.errors else 0)
