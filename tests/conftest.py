"""Shared fixtures: the real task suite, and writing submissions to files; the test tiers.

Tiers (docs/contributing/tests.md): markers registered in pyproject.toml (`--strict-markers`) say
what a test needs. Whole folders are marked here (`FOLDER_MARKERS`); a module or a test adds its own
with `pytestmark` or a decorator. `make test-fast` (KGYM_TEST_TIER=fast) leaves out every marked
test, and there any test that still starts a sandbox fails at once, naming the marker it lacks.
"""

from __future__ import annotations

import os
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task

TESTS = Path(__file__).resolve().parent
# Folders every test of which needs what these markers name.
FOLDER_MARKERS: dict[str, tuple[str, ...]] = {
    "adversarial": ("sandbox", "slow"),
    "honest": ("sandbox", "slow"),
    "sandbox": ("sandbox",),
    "integrations": ("integration",),
}
FAST_TIER = os.environ.get("KGYM_TEST_TIER") == "fast"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        for marker in FOLDER_MARKERS.get(folder, ()):
            item.add_marker(marker)


class SandboxInFastTier(RuntimeError):
    """A test of the fast tier started a sandbox."""


@pytest.fixture(autouse=True)
def _no_sandbox_in_the_fast_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the fast tier, a sandbox run fails the test at once: mark the test (or its module) `sandbox`."""
    if not FAST_TIER or request.node.get_closest_marker("sandbox") is not None:
        return
    from gym.sandbox import bwrap, docker_backend, process, supervise

    def refuse(*args: object, **kwargs: object) -> None:
        raise SandboxInFastTier(f"{request.node.nodeid} runs a job in a sandbox: mark it `sandbox` (pytestmark = pytest.mark.sandbox)")

    for owner in (bwrap.BwrapSandbox, docker_backend.DockerSandbox, docker_backend.ContainerWorker, process.ProcessSandbox, supervise.SupervisedWorker):
        monkeypatch.setattr(owner, "run", refuse)

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
