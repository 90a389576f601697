"""`kgym leaderboard build`: the static leaderboard site (gym.site.command)."""

from __future__ import annotations

import typer


def leaderboard_app() -> typer.Typer:
    from gym.site.command import leaderboard_app

    return leaderboard_app
