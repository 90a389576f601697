"""`kgym serve` (HTTP, WebSocket, MCP over HTTP) and `kgym mcp` (MCP over stdio)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from gym.cli.common import check_dsl, cli_executor, errors, fail, require_extra, return_config, reward_config
from gym.cli.options import DslOption, ExecutorOption, NoWarmOption, RayAddressOption, ReturnsOption, RewardOption, SandboxOption, SplitOption
from gym.sandbox import DEFAULT_SANDBOX
from gym.tasks.splits import SPLITS


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
    dsl: DslOption = "triton",
) -> None:
    """Serve the harness over HTTP, WebSocket and MCP (OpenEnv-compatible routes); --dsl helion has the
    prompts ask for Helion kernels unless a request names its own language."""
    require_extra("server", "kgym serve", "fastapi", "uvicorn", "websockets")
    from gym.errors import AuthConfigError, ServeStateError
    from gym.serve.auth import startup_notice
    from gym.serve.server import serve as run_server
    from gym.serve.state import default_state_dir

    check_dsl(dsl)
    if split is not None and split not in SPLITS:
        raise typer.BadParameter(f"{split!r}: the splits are {', '.join(SPLITS)}", param_hint="--split")
    reward, returns = reward_config(reward_name), return_config(returns_name)
    try:
        errors.print(startup_notice(host, token, insecure_no_auth), highlight=False, markup=False)
    except AuthConfigError as error:
        fail(f"[red]error:[/] {escape(str(error))}")
    from gym.execution import executor_grader

    folder = state or default_state_dir()
    errors.print(f"recording to {folder}", highlight=False, markup=False)
    executor = cli_executor(executor_name, ray_address, no_warm, concurrent, sandbox)
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
            dsl=dsl,
        )
    except ServeStateError as error:
        fail(f"[red]error:[/] {escape(str(error))}", 1)
    finally:
        executor.close()


def mcp(sandbox: SandboxOption = DEFAULT_SANDBOX) -> None:
    """Serve list_tasks / get_task / submit_kernel / get_result as MCP tools over stdio."""
    require_extra("server", "kgym mcp", "mcp")
    from gym.serve.mcp import run_stdio

    run_stdio(sandbox=sandbox)
