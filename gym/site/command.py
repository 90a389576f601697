"""`kgym leaderboard build RUN_DIR... --out DIR`: a thin shell over `build_site`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gym.errors import MissingExtra
from gym.extras import require

DEFAULT_OUT = Path("build/site")

leaderboard_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Build the static leaderboard site from run folders.")
errors = Console(stderr=True, soft_wrap=True, highlight=False)


@leaderboard_app.callback()
def leaderboard() -> None:
    """Build the static leaderboard site from run folders."""


@leaderboard_app.command("build")
def build(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="RUN_DIR", help="Run folders written by `kgym run`.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the site into (emptied first when it holds a previous build).")] = DEFAULT_OUT,
) -> None:
    """Build the site; unusable run folders are reported on stderr and skipped (exit 1 only when none is usable)."""
    try:
        require("site", "kgym leaderboard build")
    except MissingExtra as error:
        errors.print(str(error), markup=False)
        raise typer.Exit(1) from None
    from gym.errors import SiteBuildError
    from gym.site.build import build_site

    try:
        report = build_site(run_dirs, out)
    except SiteBuildError as error:
        errors.print(f"[red]error:[/] {error}")
        raise typer.Exit(2) from None
    for skipped in report.skipped:
        errors.print(f"[yellow]skipped run folder:[/] {skipped.reason}")
    for problem in report.problems:
        errors.print(f"[yellow]skipped inside run folder:[/] {problem}")
    if report.index is None:
        errors.print("[red]error:[/] no usable run folder; nothing was built")
        raise typer.Exit(1)
    print(f"built {report.files} files from {len(report.used)} run folder(s); open {report.index.resolve()}")
