"""The static leaderboard site: run folders in, plain HTML/CSS/JS/SVG and leaderboard.json out.

    load (run folders) -> board (Leaderboard data, gym.schema.aggregates) -> render (Jinja, charts, pygments) -> build (files)

Templates and static assets live in the checkout's leaderboard/ folder.
"""

from __future__ import annotations

from gym.site.build import BuildReport, SiteBuildError, SkippedRun, build_site
from gym.site.schema import LEADERBOARD_SCHEMA_VERSION, Leaderboard

__all__ = ["LEADERBOARD_SCHEMA_VERSION", "BuildReport", "Leaderboard", "SiteBuildError", "SkippedRun", "build_site"]
