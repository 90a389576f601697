"""`kgym run`: an agent over a suite into a resumable run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gym.cli.common import (
    cli_executor,
    console,
    discover_tasks,
    errors,
    exit_missing,
    fail,
    print_aggregate,
    progress_bar,
    report_broken,
    reward_config,
    with_preset,
)
from gym.cli.options import (
    ContractOption,
    ExecutorOption,
    FreshBaselinesOption,
    NoWarmOption,
    RayAddressOption,
    RewardOption,
    SandboxOption,
    SplitOption,
    SuiteOption,
)
from gym.errors import MissingExtra, TaskLoadError
from gym.sandbox import DEFAULT_SANDBOX
from gym.tasks.loader import find_task


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

    reward = reward_config(reward_name)
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
        exit_missing(error)
    except (AgentError, TypeError) as error:
        fail(f"[red]cannot start agent {agent!r}:[/] {error}")
    if task_ids:
        try:
            tasks = [find_task(task_id) for task_id in task_ids]
        except TaskLoadError as error:
            fail(f"[red]{error}[/]")
    else:
        report = discover_tasks(suite=suite, split=split)
        report_broken(report.errors)
        tasks = report.tasks
    if split is not None and task_ids:
        outside = [task.id for task in tasks if task.split != split]
        if outside:
            fail(f"[red]not in the {split} split:[/] {', '.join(outside)}")
    if not tasks:
        fail("[red]no tasks to run[/]")
    # The agent's prompt shows the preset's contract, and every grade is made against it.
    tasks = with_preset(tasks, contract)
    if out is None:
        if resume:
            fail("[red]--resume needs --out RUN_DIR[/]")
        out = Path("runs") / f"{agent}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    from gym.execution import GradeOptions, executor_grader

    executor = cli_executor(executor_name, ray_address, no_warm, concurrency, sandbox)
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
    with progress_bar(disable=not interactive) as progress:
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
            fail(f"[red]{error}[/]")
        except KeyboardInterrupt:
            errors.print(f"\ninterrupted: finished attempts are saved; continue with  kgym run --agent {agent} --out {out} --resume")
            raise typer.Exit(130) from None
        finally:
            executor.close()
    console.print(f"run folder: {out}")
    figures = summary.aggregate()
    if figures is not None:
        print_aggregate(figures)
    problems = {task_id: reason for task_id, reason in summary.ended.items() if reason.startswith("agent_error")}
    for task_id, reason in problems.items():
        errors.print(f"[yellow]{task_id}:[/] {reason}", highlight=False)
    raise typer.Exit(0 if summary.complete and not problems else 1)
