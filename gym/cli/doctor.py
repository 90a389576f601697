"""`kgym doctor`: versions, GPU, sandboxes, task files and one end-to-end grade."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from gym.cli.common import console


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
