"""The static leaderboard site: run folders in, plain HTML/CSS/JS/SVG and leaderboard.json out.

    load (run folders) -> board (Leaderboard data, gym.schema.aggregates) -> render (Jinja, charts, pygments) -> build (files)

Templates and static assets live in the checkout's leaderboard/ folder (an installed wheel's gym/_shipped/leaderboard).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gym.lazy import lazy_exports

if TYPE_CHECKING:
    from gym.errors import SiteBuildError
    from gym.site.build import BuildReport, SkippedRun, build_site
    from gym.site.schema import LEADERBOARD_SCHEMA_VERSION, Leaderboard

__all__ = ["LEADERBOARD_SCHEMA_VERSION", "BuildReport", "Leaderboard", "SiteBuildError", "SkippedRun", "build_site"]

# Loaded on first use, so `kgym` (which registers the leaderboard command) never imports
# the 'site' extra (jinja2, pygments) unless the site is built.
_HOMES = {
    "BuildReport": "gym.site.build",
    "SiteBuildError": "gym.site.build",
    "SkippedRun": "gym.site.build",
    "build_site": "gym.site.build",
    "LEADERBOARD_SCHEMA_VERSION": "gym.site.schema",
    "Leaderboard": "gym.site.schema",
}


__getattr__ = lazy_exports(__name__, _HOMES)
