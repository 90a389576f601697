"""`kgym`: a thin command-line shell over the library, one module per command group.

- `tasks`: list, show, check-tasks; `grade`: grade, solutions; `run`: run; `serve`: serve, mcp;
  `doctor`: doctor; `imports`: import kernelbench / opinfo / models; `leaderboard`: leaderboard build;
  `baselines`: baselines warm;
- `options`: the options several commands share (`Annotated` types); `common`: the consoles,
  `fail(message, code)` and the helpers the commands share.

Commands are registered here, in the order `kgym --help` lists them; `--log-level` sets what the
`kgym` logger (gym.log) writes to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gym.cli import baselines, doctor, grade, imports, leaderboard, run, serve, tasks
from gym.log import LEVELS, configure

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Kernel Gym: grade Triton kernels against PyTorch references.")


@app.callback()
def _roots(
    tasks: Annotated[
        list[Path] | None, typer.Option("--tasks", help="Another task root to search (repeatable; also KGYM_TASKS, os.pathsep-separated).")
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help=f"What the gym logs to stderr besides the command's output: {', '.join(LEVELS)}.", case_sensitive=False)
    ] = "warning",
) -> None:
    """Kernel Gym: grade Triton kernels against PyTorch references."""
    from gym.tasks.paths import set_extra_task_roots

    if log_level.lower() not in LEVELS:
        raise typer.BadParameter(f"{log_level!r}: one of {', '.join(LEVELS)}", param_hint="--log-level")
    configure(log_level.lower())
    set_extra_task_roots(tasks or [])


app.command("list")(tasks.list_tasks)
app.command()(tasks.show)
app.command("grade")(grade.grade_command)
app.command()(grade.solutions)
app.command("run")(run.run_command)
app.command()(doctor.doctor)
app.command()(serve.serve)
app.command()(serve.mcp)
app.command("check-tasks")(tasks.check_tasks)
app.add_typer(imports.import_app, name="import")
app.add_typer(leaderboard.leaderboard_app(), name="leaderboard", help="Build the static leaderboard site from run folders.")
app.add_typer(baselines.baselines_app, name="baselines")


def main() -> None:  # pragma: no cover - console entry
    app()


__all__ = ["app", "main"]
