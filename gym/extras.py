"""The optional parts of the gym and the pip extra that installs each.

The core install (grader and CLI: torch, triton, numpy, pydantic, typer, rich,
httpx) runs `kgym list/show/grade/solutions/run/doctor`. The rest is behind
extras, imported only where used; `require` turns a missing one into a
`MissingExtra` whose message is the one line to act on.
"""

from __future__ import annotations

import importlib

from gym.errors import MissingExtra

PACKAGE = "kernel-gym"

# extra -> the modules it installs (as imported).
EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("fastapi", "uvicorn", "websockets", "mcp"),
    "agents": ("openai",),
    "site": ("jinja2", "pygments"),
    "docker": ("docker",),
    "helion": ("helion", "packaging"),
    "kernelbench": ("einops",),
    "opinfo": ("expecttest",),
    "models": ("transformers",),
    "ray": ("ray",),
    "openenv": ("openenv.core",),
    "verifiers": ("verifiers",),
    "verl": ("verl",),
    "skyrl": ("skyrl_gym",),
}


def missing(extra: str, *modules: str) -> str | None:
    """The first of `modules` (default: every module of `extra`) that cannot be imported; None when all can."""
    for module in modules or EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            return module
    return None


def require(extra: str, feature: str, *modules: str) -> None:
    """Raise MissingExtra when `feature` cannot run because `modules` (default: all of `extra`'s) are missing."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r} (known: {', '.join(EXTRAS)})")
    absent = missing(extra, *modules)
    if absent is not None:
        raise MissingExtra(extra, feature, absent)
