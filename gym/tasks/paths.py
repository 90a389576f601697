"""Where the task suite, the references and the user's imported tasks live.

The shipped folders (`tasks/`, `references/`, `leaderboard/`, `sandbox/`) live at the top of the
checkout; a wheel carries copies of them as package data in `gym/_shipped/` (setup.py copies them
in at build time). `shipped_root()` is the checkout when the gym runs from one (a source tree or an
editable install), else that package data.

Task roots, searched in this order (the first holding an id wins):
1. the shipped suite, `shipped_root()/tasks` (`KGYM_ROOT` points at another checkout);
2. roots added for this process (`kgym --tasks DIR`, `add_task_root`);
3. every folder in `KGYM_TASKS` (os.pathsep-separated);
4. the user root, where `kgym import` writes: `KGYM_USER_TASKS`, else
   `$XDG_DATA_HOME/kgym/tasks`, else `~/.local/share/kgym/tasks`.
"""

from __future__ import annotations

import os
from pathlib import Path

from gym import settings

_EXTRA_ROOTS: list[Path] = []

# The `gym` package folder, and where a wheel keeps its copies of the checkout's shipped folders.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
SHIPPED_DIR = PACKAGE_DIR / "_shipped"


def checkout_root() -> Path | None:
    """The source tree the gym runs from (a checkout, an editable install), or None (an installed wheel)."""
    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "tasks").is_dir():
        return root
    return None


def shipped_root() -> Path:
    """The folder holding the shipped `tasks/`, `references/`, `leaderboard/` and `sandbox/`: the
    checkout when running from one, else the wheel's package data (`gym/_shipped`)."""
    checkout = checkout_root()
    if checkout is not None:
        return checkout
    if SHIPPED_DIR.is_dir():
        return SHIPPED_DIR
    # Neither: name the folder a checkout would have, so "no tasks folder" errors point somewhere.
    return PACKAGE_DIR.parent


def project_root() -> Path:
    """`shipped_root()`, unless `KGYM_ROOT` names another checkout."""
    return settings.project_root_override() or shipped_root()


def tasks_dir() -> Path:
    """The shipped suite's root."""
    return project_root() / "tasks"


def references_dir() -> Path:
    return project_root() / "references"


def user_data_dir(name: str, override_variable: str) -> Path:
    """The gym's folder `name` in the user's data folder (`$XDG_DATA_HOME/kgym/NAME`, else
    `~/.local/share/kgym/NAME`), unless the setting `override_variable` (gym.settings) names another."""
    override = settings.path(override_variable, resolve=True)
    if override is not None:
        return override
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser().resolve() / "kgym" / name


def user_tasks_dir() -> Path:
    """The root `kgym import` writes into by default (outside any checkout)."""
    return user_data_dir("tasks", "KGYM_USER_TASKS")


def add_task_root(folder: Path) -> None:
    """Search `folder` for tasks too, in this process (after the shipped suite)."""
    resolved = folder.expanduser().resolve()
    if resolved not in _EXTRA_ROOTS:
        _EXTRA_ROOTS.append(resolved)


def set_extra_task_roots(folders: list[Path]) -> None:
    """Exactly these roots added for this process (the CLI's `--tasks`, once per command)."""
    _EXTRA_ROOTS.clear()
    for folder in folders:
        add_task_root(folder)


def task_roots() -> list[Path]:
    """Every task root, in search order, without duplicates (missing folders included: callers skip them)."""
    roots = [tasks_dir(), *_EXTRA_ROOTS]
    roots += settings.extra_task_roots()
    roots.append(user_tasks_dir())
    unique: list[Path] = []
    for root in roots:
        if root not in unique:
            unique.append(root)
    return unique
