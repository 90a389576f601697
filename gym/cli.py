"""`kgym`: a thin command-line shell over the library."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

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

from gym.errors import MissingExtra, TaskLoadError
from gym.extras import require
from gym.grading.options import GradeOptions
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, reward_preset
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.aggregates import Aggregate, aggregate
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import LoadReport, discover, find_task
from gym.tasks.model import Task
from gym.tasks.splits import SPLITS

if TYPE_CHECKING:
    from gym.execution.executor import Executor

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

SuiteOption = Annotated[str | None, typer.Option("--suite", help='Only tasks of this suite or below it ("l1", "kb", "kb/l1").')]
ContractOption = Annotated[
    str | None, typer.Option("--contract", help='Grade against a contract preset instead of each task\'s own ("kernelbench": its fixed tolerance).')
]
SplitOption = Annotated[str | None, typer.Option("--split", help="Only tasks of this split: train, val or test (stable per task; see README, Splits).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
RewardOption = Annotated[
    str,
    typer.Option(
        "--reward",
        help=(
            "Reward preset: default, kernelbench-fast-p (kernelbench-fast-P sets p, e.g. kernelbench-fast-1.5), kernrl, kernelgym, "
            "modelled (gym.harness.reward); `kgym run` records it in run.json (a resume must name the same)."
        ),
    ),
]
ReturnsOption = Annotated[
    str,
    typer.Option("--returns", help="How an episode's turn rewards make its return: best (default), last, discounted, kevin (discounted, gamma 0.4)."),
]
SandboxOption = Annotated[str, typer.Option("--sandbox", help="Where the submission runs: bwrap (default), docker, or process (unsafe, debugging only).")]
ExecutorOption = Annotated[
    str, typer.Option("--executor", help="Where grades run: local (this host, one device per grade) or ray (a Ray cluster; the 'ray' extra).")
]
RayAddressOption = Annotated[
    str | None, typer.Option("--ray-address", help='Ray cluster for --executor ray: "auto" (the one `ray start` runs here), HOST:PORT; default: a local Ray.')
]
NoWarmOption = Annotated[bool, typer.Option("--no-warm", help="Start every sandboxed worker cold (no warm pool).")]
FreshBaselinesOption = Annotated[
    bool, typer.Option("--fresh-baselines", help="Re-measure the reference baselines (eager, torch.compile) and overwrite the cached ones.")
]


@app.callback()
def _roots(
    tasks: Annotated[
        list[Path] | None, typer.Option("--tasks", help="Another task root to search (repeatable; also KGYM_TASKS, os.pathsep-separated).")
    ] = None,
) -> None:
    """Kernel Gym: grade Triton kernels against PyTorch references."""
    from gym.tasks.paths import set_extra_task_roots

    set_extra_task_roots(tasks or [])


T = TypeVar("T")


def _named(option: str, make: Callable[[str], T], name: str) -> T:
    """`make(name)` (a preset by name), or exit 2 naming `option` and why the name is refused."""
    try:
        return make(name)
    except ValueError as error:
        why = error.errors()[0]["msg"].removeprefix("Value error, ") if isinstance(error, ValidationError) else str(error)
        errors.print(f"[red]{option}:[/] {escape(why)}", highlight=False)
        raise typer.Exit(2) from None


def _reward_config(name: str) -> RewardConfig:
    """The RewardConfig of preset `name`, or exit 2 with why not."""
    return _named("--reward", reward_preset, name)


def _return_config(name: str) -> ReturnConfig:
    """The ReturnConfig named `name`, or exit 2 with why not."""
    return _named("--returns", as_return_config, name)


def _require(extra: str, feature: str, *modules: str) -> None:
    """End the command with the one line naming the extra when `feature` lacks it (exit 1)."""
    try:
        require(extra, feature, *modules)
    except MissingExtra as error:
        _missing(error)


def _missing(error: MissingExtra) -> NoReturn:
    errors.print(str(error), highlight=False, markup=False)
    raise typer.Exit(1) from None


def _with_preset(tasks: list[Task], contract: str | None) -> list[Task]:
    """The tasks with a contract preset in place of their own (exit 2 on an unknown preset)."""
    if contract is None:
        return tasks
    from gym.errors import ContractPresetError
    from gym.tasks.contract_presets import with_contract

    try:
        return [with_contract(task, contract) for task in tasks]
    except ContractPresetError as error:
        errors.print(f"[red]{error}[/]", highlight=False)
        raise typer.Exit(2) from None


def _executor(name: str, ray_address: str | None, no_warm: bool, concurrency: int | None, sandbox: str) -> Executor:
    """The executor the command grades through (its concurrency: `concurrency`, else its own default)."""
    from gym.errors import ExecutorError
    from gym.execution import GradeOptions, make_executor

    settings: dict[str, object] = {"concurrency": concurrency, "warm": not no_warm, "options": GradeOptions(sandbox=sandbox, warm=not no_warm)}
    if name == "ray":
        settings["address"] = ray_address
    elif ray_address is not None:
        errors.print("[red]--ray-address needs --executor ray[/]")
        raise typer.Exit(2)
    try:
        return make_executor(name, **settings)
    except MissingExtra as error:
        _missing(error)
    except ExecutorError as error:
        errors.print(f"[red]{escape(str(error))}[/]", highlight=False)
        raise typer.Exit(2) from None


def _discover(suite: str | None = None, include_degenerate: bool = False, split: str | None = None) -> LoadReport:
    """discover(), with a bad --split as a usage error."""
    if split is not None and split not in SPLITS:
        raise typer.BadParameter(f"{split!r}: the splits are {', '.join(SPLITS)}", param_hint="--split")
    return discover(suite=suite, include_degenerate=include_degenerate, split=split)


def _report_broken(problems: list[str]) -> None:
    for problem in problems:
        errors.print(f"[yellow]skipped broken task:[/] {problem}", highlight=False)


def _progress(disable: bool) -> Progress:
    """The progress bar of every long command (on stderr, gone when done)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=errors, transient=True, disable=disable)


@app.command("list")
def list_tasks(
    suite: SuiteOption = None,
    split: SplitOption = None,
    as_json: JsonOption = False,
    show_all: Annotated[bool, typer.Option("--all", help="Also the tasks check-tasks marked degenerate (left out of suites otherwise).")] = False,
) -> None:
    """List the tasks (broken task files are reported on stderr and skipped); --json adds each task's
    split and metadata (source, level, op kind, bench bytes and FLOPs, aten ops)."""
    from gym.tasks.metadata import task_metadata

    report = _discover(suite=suite, include_degenerate=show_all, split=split)
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
        table.add_column(column)
    for task in report.tasks:
        dtypes = ", ".join(task.spec.dtypes) + (f" (+{', '.join(task.spec.gpu_only_dtypes)} on GPU)" if task.spec.gpu_only_dtypes else "")
        row = [task.id, task.spec.title, str(task.split), dtypes, ", ".join(check.kind for check in task.spec.contract)]
        table.add_row(*row, *([escape(task.spec.degenerate or "")] if show_all else []))
    console.print(table)


@app.command()
def show(task: Annotated[str, typer.Argument(help="Task id, e.g. l1/softmax.")]) -> None:
    """Print the prompt an agent sees for TASK (hidden shapes are never shown)."""
    from gym.tasks.prompt import render_prompt

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
            checks = (
                "; ".join(f"[{'green' if c.passed else 'red'}]{c.kind}[/] {c.figure:.3g}" if c.figure is not None else f"{c.kind}" for c in trial.checks)
                or f"[red]{trial.error}[/]"
            )
            table.add_row(trial.label, "hidden" if trial.hidden else str(trial.shape), checks)
        console.print(table)
    console.print(result.feedback, highlight=False, markup=False)


@app.command("grade")
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
        typer.Option("--gpu-profile", help='The GPU profile traffic is modelled on ("H100 SXM", "A100", "L4", "MI300X", ...: gym/grading/gpu_profiles.toml).'),
    ] = "H100 SXM",
    profile: Annotated[
        str | None,
        typer.Option("--profile", help='"ncu": also Nsight Compute\'s speed-of-light figures of one replay (GPU, ncu installed, counters readable).'),
    ] = None,
    no_confirm: Annotated[
        bool, typer.Option("--no-confirm", help="Do not re-grade a pass with an implausible speedup before it is reported (gym.grading.confirm).")
    ] = False,
) -> None:
    """Grade FILE against TASK. Exit status 0 only when the grade is `passed`."""
    from gym.execution.local import LocalExecutor

    if profile not in (None, "ncu"):
        console.print(f'[red]--profile takes "ncu", not {profile!r}[/]')
        raise typer.Exit(2)
    options = GradeOptions(
        sandbox=sandbox, contract=contract, fresh_baselines=fresh_baselines, gpu_profile=gpu_profile, profile="ncu" if profile else None, confirm=not no_confirm
    )
    executor = LocalExecutor(concurrency=1, warm=False)
    try:
        result = executor.grade(task, file, options, keep_job=keep_job)
    finally:
        executor.close()
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        _print_grade(result)
    raise typer.Exit(0 if result.status == Status.passed else 1)


@app.command()
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
) -> None:
    """Grade every task's shipped solution.py and print a table (exit 1 if any fails)."""
    from gym.execution.batch import grade_many

    report = discover(suite=suite)
    _report_broken(report.errors)
    jobs = [(task, task.solution_path) for task in report.tasks if task.has_solution]
    executor = _executor(executor_name, ray_address, no_warm, parallel, sandbox)
    try:
        with _progress(disable=as_json) as progress:
            bar = progress.add_task("grading shipped solutions", total=len(jobs))
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
        _print_aggregate(aggregate(results))
        for result in results:
            if result.status != Status.passed:
                console.print(f"\n[bold]{result.task_id}[/]:\n{result.feedback}", highlight=False)
    failed = [result for result in results if result.status != Status.passed]
    raise typer.Exit(1 if failed or report.errors else 0)


def _print_aggregate(summary: Aggregate) -> None:
    parts = [f"correct {summary.passed}/{summary.tasks} ({summary.correct_rate:.0%})"]
    for name, figures in (("eager", summary.eager), ("torch.compile", summary.compile)):
        fast = ", ".join(f"{label} {value:.0%}" for label, value in figures.fast.items())
        geomean = f"geomean {figures.geomean_speedup:.3g}x over {figures.geomean_count}" if figures.geomean_speedup is not None else "geomean n/a"
        parts.append(f"vs {name}: {fast}; {geomean}")
    if summary.median_sol_fraction is not None:
        parts.append(f"median speed-of-light fraction {summary.median_sol_fraction:.2f}")
    console.print("\n".join(parts), highlight=False, soft_wrap=True)
    if summary.interpreted:
        console.print("Timings are [bold]interpreted[/] (Triton interpreter on CPU): they check the harness, not kernel speed.")


@app.command("run")
def run_command(
    agent: Annotated[str, typer.Option("--agent", help="solutions, replay or openai.")],
    model: Annotated[str | None, typer.Option("--model", help="Model name (openai agent).")] = None,
    suite: SuiteOption = None,
    task_ids: Annotated[list[str] | None, typer.Option("--task", help="Only this task (repeatable).")] = None,
    split: SplitOption = None,
    attempts: Annotated[int, typer.Option("--attempts", min=1, help="Attempt budget per task.")] = 3,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-j", min=1, help="Episodes graded at once (default: the executor's: GPUs on a GPU host, cores on CPU).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Run folder (default runs/<agent>-<UTC time>).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run folder given by --out.")] = False,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (openai agent).")] = None,
    replay_dir: Annotated[Path | None, typer.Option("--replay-dir", help="Submissions laid out by task id (replay agent).")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", help="Sampling temperature (openai agent).")] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Completion token limit per reply (openai agent).")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", help="Variable holding the API key (openai agent; default OPENAI_API_KEY).")] = None,
    contract: ContractOption = None,
    fresh_baselines: FreshBaselinesOption = False,
    executor_name: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    no_warm: NoWarmOption = False,
    reward_name: RewardOption = "default",
) -> None:
    """Run an agent over a suite into a resumable run folder and print the aggregate summary."""
    from datetime import UTC, datetime

    from gym.errors import RunFolderError
    from gym.grading.grader import default_device
    from gym.harness.agents import AgentError, make_agent
    from gym.harness.run_folder import RunConfig
    from gym.harness.runner import run_agent

    reward = _reward_config(reward_name)
    options: dict[str, object] = {}
    if model is not None:
        options["model"] = model
    if base_url is not None:
        options["base_url"] = base_url
    if replay_dir is not None:
        options["folder"] = replay_dir
    for key, value in (("temperature", temperature), ("max_tokens", max_tokens), ("api_key_env", api_key_env)):
        if value is not None:
            options[key] = value
    try:
        chosen = make_agent(agent, **options)
    except MissingExtra as error:
        _missing(error)
    except (AgentError, TypeError) as error:
        errors.print(f"[red]cannot start agent {agent!r}:[/] {error}", highlight=False)
        raise typer.Exit(2) from None
    if task_ids:
        try:
            tasks = [find_task(task_id) for task_id in task_ids]
        except TaskLoadError as error:
            errors.print(f"[red]{error}[/]", highlight=False)
            raise typer.Exit(2) from None
    else:
        report = _discover(suite=suite, split=split)
        _report_broken(report.errors)
        tasks = report.tasks
    if split is not None and task_ids:
        outside = [task.id for task in tasks if task.split != split]
        if outside:
            errors.print(f"[red]not in the {split} split:[/] {', '.join(outside)}", highlight=False)
            raise typer.Exit(2)
    if not tasks:
        errors.print("[red]no tasks to run[/]")
        raise typer.Exit(2)
    # The agent's prompt shows the preset's contract, and every grade is made against it.
    tasks = _with_preset(tasks, contract)
    if out is None:
        if resume:
            errors.print("[red]--resume needs --out RUN_DIR[/]")
            raise typer.Exit(2)
        out = Path("runs") / f"{agent}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    from gym.execution import GradeOptions, executor_grader

    executor = _executor(executor_name, ray_address, no_warm, concurrency, sandbox)
    grader = executor_grader(executor, GradeOptions(sandbox=sandbox, contract=contract, fresh_baselines=fresh_baselines, warm=not no_warm))
    config = RunConfig(
        agent=agent,
        model=chosen.model,
        suite=suite if not task_ids else None,
        split=split,
        tasks=[task.id for task in tasks],
        attempts=attempts,
        concurrency=concurrency or executor.concurrency,
        sandbox=sandbox,
        device=default_device().type,
        contract=contract,
        agent_options=chosen.options(),
        executor=executor_name,
        reward=reward,
    )
    interactive = console.is_terminal
    with _progress(disable=not interactive) as progress:
        bar = progress.add_task(f"{agent}: episodes", total=len(tasks))

        def attempt_done(line: object) -> None:
            text = f"{line.task_id} attempt {line.attempt}: {line.status.value}"  # type: ignore[attr-defined]
            if interactive:
                progress.console.print(text, highlight=False)
            else:
                print(text, flush=True)

        def episode_done(task_id: str, reason: str) -> None:
            progress.advance(bar)
            if not interactive:
                print(f"{task_id}: episode ended ({reason})", flush=True)

        try:
            summary = run_agent(chosen, tasks, out, config, resume=resume, grader=grader, on_attempt=attempt_done, on_episode=episode_done)
        except RunFolderError as error:
            errors.print(f"[red]{error}[/]", highlight=False)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            errors.print(f"\ninterrupted: finished attempts are saved; continue with  kgym run --agent {agent} --out {out} --resume")
            raise typer.Exit(130) from None
        finally:
            executor.close()
    console.print(f"run folder: {out}")
    figures = summary.aggregate()
    if figures is not None:
        _print_aggregate(figures)
    problems = {task_id: reason for task_id, reason in summary.ended.items() if reason.startswith("agent_error")}
    for task_id, reason in problems.items():
        errors.print(f"[yellow]{task_id}:[/] {reason}", highlight=False)
    raise typer.Exit(0 if summary.complete and not problems else 1)


@app.command()
def doctor(
    quick: Annotated[bool, typer.Option("--quick", help="Skip the end-to-end grade of l1/vector_add.")] = False,
) -> None:
    """Versions, GPU, sandbox backends, task files, and one end-to-end grade."""
    from gym.doctor import diagnose

    checks = diagnose(smoke_grade=not quick)
    table = Table(title="kgym doctor")
    table.add_column("check")
    table.add_column("")
    table.add_column("detail")
    for check in checks:
        mark = {True: "[green]ok[/]", False: "[red]FAIL[/]", None: ""}[check.ok]
        table.add_row(check.name, mark, escape(check.detail))  # details may hold brackets, e.g. kernel-gym[docker]
    console.print(table)
    raise typer.Exit(1 if any(check.ok is False for check in checks) else 0)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind (loopback unless you mean it).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    sandbox: SandboxOption = DEFAULT_SANDBOX,
    split: SplitOption = None,
    attempts: Annotated[int, typer.Option("--attempts", min=1, help="Attempt budget per episode.")] = 5,
    concurrent: Annotated[
        int | None, typer.Option("--concurrent-grades", min=1, help="Grades run at once, the rest queue (default: the executor's: GPUs, or cores on CPU).")
    ] = None,
    queue: Annotated[int, typer.Option("--max-queue", min=1, help="Grades waiting at most; beyond it requests get 503.")] = 16,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="Folder recording submissions, grades and episode attempts; a server restarted on it loses nothing "
            "(default: KGYM_SERVE_STATE, else $XDG_DATA_HOME/kgym/serve, else ~/.local/share/kgym/serve).",
        ),
    ] = None,
    executor_name: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    no_warm: NoWarmOption = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="KGYM_SERVE_TOKEN",
            show_envvar=True,
            help="Require 'Authorization: Bearer <token>' on every route but /health (HTTP, WebSocket, /mcp).",
        ),
    ] = None,
    insecure_no_auth: Annotated[
        bool, typer.Option("--insecure-no-auth", help="Serve a non-loopback address without a token (anyone who reaches the port may grade code).")
    ] = False,
    reward_name: RewardOption = "default",
    returns_name: ReturnsOption = "best",
) -> None:
    """Serve the harness over HTTP, WebSocket and MCP (OpenEnv-compatible routes)."""
    _require("server", "kgym serve", "fastapi", "uvicorn", "websockets")
    from gym.errors import AuthConfigError, ServeStateError
    from gym.serve.auth import startup_notice
    from gym.serve.server import serve as run_server
    from gym.serve.state import default_state_dir

    if split is not None and split not in SPLITS:
        raise typer.BadParameter(f"{split!r}: the splits are {', '.join(SPLITS)}", param_hint="--split")
    reward, returns = _reward_config(reward_name), _return_config(returns_name)
    try:
        errors.print(startup_notice(host, token, insecure_no_auth), highlight=False, markup=False)
    except AuthConfigError as error:
        errors.print(f"[red]error:[/] {escape(str(error))}", highlight=False)
        raise typer.Exit(2) from None
    from gym.execution import executor_grader

    folder = state or default_state_dir()
    errors.print(f"recording to {folder}", highlight=False, markup=False)
    executor = _executor(executor_name, ray_address, no_warm, concurrent, sandbox)
    errors.print(f"grading through the {executor.name} executor, {executor.concurrency} at once", highlight=False, markup=False)
    try:
        run_server(
            host,
            port,
            sandbox=sandbox,
            max_attempts=attempts,
            max_concurrent_grades=concurrent or executor.concurrency,
            max_queue=queue,
            state=folder,
            split=split,
            grader=executor_grader(executor),
            token=token or None,
            reward=reward,
            returns=returns,
        )
    except ServeStateError as error:
        errors.print(f"[red]error:[/] {escape(str(error))}", highlight=False)
        raise typer.Exit(1) from None
    finally:
        executor.close()


@app.command()
def mcp(sandbox: SandboxOption = DEFAULT_SANDBOX) -> None:
    """Serve list_tasks / get_task / submit_kernel / get_result as MCP tools over stdio."""
    _require("server", "kgym mcp", "mcp")
    from gym.serve.mcp import run_stdio

    run_stdio(sandbox=sandbox)


@app.command("check-tasks")
def check_tasks(
    suite: SuiteOption = None,
    as_json: JsonOption = False,
    contract: ContractOption = None,
) -> None:
    """Validate tasks: deterministic, input- and weight-dependent references that trivial answers and a
    float16 reference fail. Imported tasks that fail are marked degenerate (left out of suites); exit 1
    when a shipped task fails."""
    from gym.grading.task_validation import TaskCheck, mark_imported, validate_tasks

    report = discover(suite=suite, include_degenerate=True)
    _report_broken(report.errors)
    tasks = report.tasks
    tasks = _with_preset(tasks, contract)
    by_id = {task.id: task for task in report.tasks}
    with _progress(disable=as_json) as progress:
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


import_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Import problems from other benchmarks as tasks.")
app.add_typer(import_app, name="import")


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
) -> None:
    """Write KernelBench problems as task folders (kb/l1/19_relu, ...) into a task root outside the repo."""
    from gym.errors import ProblemError
    from gym.tasks.kernelbench.importer import ProblemImport, import_checkout
    from gym.tasks.paths import user_tasks_dir

    chosen = _levels(levels)
    root = (out or user_tasks_dir()).expanduser().resolve()
    from gym.tasks.kernelbench.importer import find_problems

    total = len(find_problems(path.expanduser().resolve(), chosen)) if path.is_dir() else 0
    with _progress(disable=as_json) as progress:
        bar = progress.add_task("importing KernelBench problems", total=total or None)

        def done(problem: ProblemImport) -> None:
            progress.advance(bar)
            if problem.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(problem.source_path)}:[/] {escape(problem.reason or '')}", highlight=False)

        try:
            report = import_checkout(path.expanduser(), root, chosen, on_problem=done)
        except ProblemError as error:
            errors.print(f"[red]error:[/] {escape(str(error))}", highlight=False)
            raise typer.Exit(2) from None
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        counts = ", ".join(f"{report.count(kind)} {kind}" for kind in ("new", "updated", "unchanged", "failed"))
        console.print(f"{len(report.problems)} problems from {report.checkout} (commit {report.commit or 'unknown'}) into {root}: {counts}")
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite kb  (marks problems unfit to grade as degenerate)")
    _record_splits(root, [problem.task_id for problem in report.problems if problem.task_id and problem.outcome != "failed"], as_json)
    raise typer.Exit(1 if report.count("failed") else 0)


def _record_splits(root: Path, task_ids: list[str], quiet: bool) -> None:
    """Write the imported tasks' splits into the root's splits.json (existing entries never change)."""
    from gym.tasks.splits import SPLITS_FILE, record_splits, split_counts

    recorded = record_splits(root, task_ids)
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
) -> None:
    """Write PyTorch's OpInfo ops as task folders (opinfo/add, opinfo/max__binary, ...) into a task root
    outside the repo; ops that cannot be a kernel task are named with their reason. Needs the opinfo extra."""
    from gym.errors import ProblemError
    from gym.tasks.opinfo.importer import OpImport, import_opinfo, load_entries, select_entries
    from gym.tasks.paths import user_tasks_dir

    root = (out or user_tasks_dir()).expanduser().resolve()
    try:
        total = len(select_entries(load_entries(), ops or None))
    except ProblemError as error:
        errors.print(f"[red]error:[/] {escape(str(error))}", highlight=False)
        raise typer.Exit(2) from None
    with _progress(disable=as_json) as progress:
        bar = progress.add_task("importing OpInfo ops", total=total)

        def done(op: OpImport) -> None:
            progress.advance(bar)
            if op.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(op.op)}:[/] {escape(op.reason or '')}: {escape(op.detail or '')}", highlight=False)

        report = import_opinfo(root, ops or None, on_op=done)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        counts = ", ".join(f"{report.count(kind)} {kind}" for kind in ("new", "updated", "unchanged", "excluded", "failed"))
        console.print(f"{len(report.ops)} OpInfo entries of torch {report.torch_version} into {root}: {counts}")
        for reason, names in sorted(report.reasons().items(), key=lambda item: -len(item[1])):
            console.print(f"  left out, {reason} ({len(names)}): {escape(', '.join(names[:12]))}{', ...' if len(names) > 12 else ''}", highlight=False)
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite opinfo  (marks tasks unfit to grade as degenerate)")
    _record_splits(root, [op.task_id for op in report.ops if op.task_id and op.outcome in ("new", "updated", "unchanged")], as_json)
    raise typer.Exit(1 if report.count("failed") else 0)


@import_app.command("models")
def import_models_command(
    names: Annotated[list[str] | None, typer.Argument(help="Architectures to trace (e.g. llama2_7b resnet50); all when none.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Task root to write into (default: the user root, see `kgym list`).")] = None,
    layers: Annotated[
        int | None, typer.Option("--layers", min=1, help="Trace this many blocks instead of the published count (faster; shifts shares).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Trace real architectures (transformers configs at published sizes, meta device, no download) and write
    the ops carrying most of each model's modelled time as tasks models/<model>/<op>_<rank>. Needs the models extra."""
    from gym.errors import ProblemError
    from gym.tasks.models.architectures import ARCHITECTURES
    from gym.tasks.models.importer import ModelOpImport, import_models
    from gym.tasks.paths import user_tasks_dir

    root = (out or user_tasks_dir()).expanduser().resolve()
    with _progress(disable=as_json) as progress:
        bar = progress.add_task("importing model ops", total=None)

        def done(op: ModelOpImport) -> None:
            progress.advance(bar)
            if op.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{escape(op.model)} {escape(op.op)}:[/] {escape(op.reason or '')}", highlight=False)

        try:
            report = import_models(root, names or None, layers, on_op=done)
        except ProblemError as error:
            errors.print(f"[red]error:[/] {escape(str(error))}", highlight=False)
            raise typer.Exit(2) from None
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        counts = ", ".join(f"{report.count(kind)} {kind}" for kind in ("new", "updated", "unchanged", "excluded", "failed"))
        console.print(f"{len(report.models)} traced models ({', '.join(names or ARCHITECTURES)}) into {root}: {counts}")
        for model, covered in report.models.items():
            console.print(f"  {model}: its tasks cover {covered:.0%} of its modelled forward time", highlight=False)
        if root not in [folder.resolve() for folder in _default_roots()]:
            console.print(f"{root} is not a default task root: pass --tasks {root} (or set KGYM_TASKS) to use these tasks")
        console.print("next: kgym check-tasks --suite models  (marks tasks unfit to grade as degenerate)")
    _record_splits(root, [op.task_id for op in report.ops if op.task_id and op.outcome in ("new", "updated", "unchanged")], as_json)
    raise typer.Exit(1 if report.count("failed") else 0)


def _default_roots() -> list[Path]:
    from gym.tasks.paths import task_roots

    return task_roots()


def _leaderboard_app() -> typer.Typer:
    from gym.site.command import leaderboard_app

    return leaderboard_app


app.add_typer(_leaderboard_app(), name="leaderboard", help="Build the static leaderboard site from run folders.")

baselines_app = typer.Typer(no_args_is_help=True, add_completion=False, help="The cached reference baselines (eager, torch.compile) grades reuse.")
app.add_typer(baselines_app, name="baselines")


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
    from gym.grading.baseline_cache import BaselineCache
    from gym.grading.baseline_warm import WarmedBaseline, warm_baselines, warm_targets
    from gym.grading.grader import default_device

    try:
        chosen = torch.device(device) if device is not None else default_device()
    except RuntimeError as error:
        errors.print(f"[red]bad --device:[/] {escape(str(error))}", highlight=False)
        raise typer.Exit(2) from None
    if chosen.type == "cuda" and not torch.cuda.is_available():
        errors.print("[red]--device cuda: no CUDA device is available[/]")
        raise typer.Exit(2)
    if task_ids and suite is None:
        try:
            tasks = [find_task(task_id) for task_id in task_ids]
        except TaskLoadError as error:
            errors.print(f"[red]{error}[/]", highlight=False)
            raise typer.Exit(2) from None
    else:
        report = discover(suite=suite)
        _report_broken(report.errors)
        tasks = report.tasks
        if task_ids:
            unknown = sorted(set(task_ids) - {task.id for task in tasks})
            if unknown:
                errors.print(f"[red]not in {'suite ' + suite if suite else 'the task roots'}:[/] {', '.join(unknown)}", highlight=False)
                raise typer.Exit(2)
            tasks = [task for task in tasks if task.id in task_ids]
    targets = warm_targets(tasks, chosen)
    if not targets:
        errors.print("[red]no tasks to warm[/]")
        raise typer.Exit(2)
    cache = BaselineCache(cache_dir)
    with _progress(disable=as_json) as progress:
        bar = progress.add_task(f"baselines on {chosen}", total=len(targets))

        def done(row: WarmedBaseline) -> None:
            progress.advance(bar)
            if row.outcome == "failed" and not as_json:
                progress.console.print(f"[yellow]{row.task_id} {row.trial}:[/] {escape(row.error or '')}", highlight=False)

        try:
            rows = warm_baselines(targets, chosen, fresh=fresh, cache=cache, on_done=done)
        except BaselineCacheError as error:
            errors.print(f"[red]{escape(str(error))}[/]", highlight=False)
            raise typer.Exit(2) from None
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


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
