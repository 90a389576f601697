"""KernelBench fixtures: a mini checkout of KernelBench-format problems written for these tests
(nothing of KernelBench itself), imported once per session into a task root of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.tasks.kernelbench.importer import ImportReport, import_checkout
from gym.tasks.loader import find_task
from gym.tasks.model import Task

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
SUBMISSIONS = HERE / "submissions"


@pytest.fixture(scope="session")
def kb_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kb-root")


@pytest.fixture(scope="session")
def kb_import(kb_root: Path) -> ImportReport:
    return import_checkout(FIXTURES, kb_root)


@pytest.fixture(scope="session")
def kb_task(kb_root: Path, kb_import: ImportReport) -> object:
    def load(task_id: str) -> Task:
        return find_task(task_id, tasks_root=kb_root)

    return load
