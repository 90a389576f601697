"""Shared fixtures: the real task suite, and writing submissions to files."""

from __future__ import annotations

import os
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task

# Tests see the shipped suite only: a user's imported tasks (kgym import) never leak in.
os.environ["KGYM_USER_TASKS"] = tempfile.mkdtemp(prefix="kgym-user-tasks-")
# Cached reference baselines go to a per-session folder, never the user's ~/.cache/kgym/baselines.
os.environ["KGYM_BASELINE_CACHE"] = tempfile.mkdtemp(prefix="kgym-baselines-")
os.environ.pop("KGYM_TASKS", None)


@pytest.fixture(scope="session")
def suite_tasks() -> list[Task]:
    report = discover()
    assert not report.errors, report.errors
    return report.tasks


@pytest.fixture(scope="session")
def vector_add() -> Task:
    return find_task("l1/vector_add")


@pytest.fixture
def write_submission(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented source to tmp_path/<name>.py and return the path."""

    def write(source: str, name: str = "submission") -> Path:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return path

    return write
