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
from collections.abc import Callable, Iterator
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
# Modules (paths under tests/) whose tests need what these markers name: most of their tests grade in
# a sandbox, or they take tens of seconds each (measured with --durations; docs/contributing/tests.md).
MODULE_MARKERS: dict[str, tuple[str, ...]] = {
    "tasks/test_suite.py": ("sandbox", "slow"),
    "tasks/kernelbench/test_grading.py": ("sandbox", "slow"),
    "tasks/kernelbench/test_run.py": ("sandbox", "slow"),
    "tasks/kernelbench/test_import.py": ("slow",),
    "tasks/models/test_models_import.py": ("sandbox", "slow"),
    "tasks/test_models_fusion.py": ("sandbox", "slow"),
    "tasks/test_models_backward.py": ("sandbox", "slow"),
    "tasks/opinfo/test_opinfo_import.py": ("sandbox", "slow"),
    "grading/test_grader.py": ("sandbox",),
    "grading/test_helion.py": ("sandbox", "slow"),
    "grading/test_stages.py": ("sandbox",),
    "grading/test_timing.py": ("sandbox",),
    "grading/test_grade_signal.py": ("sandbox",),
    "grading/test_bench_timing.py": ("sandbox",),
    "grading/test_integrity.py": ("sandbox",),
    "grading/test_confirm.py": ("sandbox",),
    "grading/test_baseline_cache.py": ("sandbox",),
    "grading/test_gpu_readiness.py": ("slow",),
    "grading/test_task_validation.py": ("slow",),
    "worker/test_audit_hooks.py": ("sandbox",),
    "worker/test_interpreter_lanes.py": ("sandbox",),
    "worker/test_interpreter_shim.py": ("sandbox",),
    "worker/test_interpreter_gaps.py": ("sandbox", "slow"),
    "worker/test_worker_package.py": ("sandbox",),
    "execution/test_local_executor.py": ("sandbox",),
    "execution/test_ray_executor.py": ("sandbox", "slow"),
    "harness/test_env.py": ("sandbox",),
    "harness/test_openai_agent.py": ("sandbox",),
    "harness/test_runner.py": ("slow",),
    "serve/test_server.py": ("sandbox",),
    "serve/test_restart.py": ("slow",),
    "serve/test_mcp.py": ("sandbox", "slow"),
    "site/test_docs.py": ("slow",),
    "site/test_leaderboard_browser.py": ("browser",),
    "test_cli.py": ("sandbox",),
    "test_extras.py": ("slow",),
    "packaging/test_wheel.py": ("slow",),
}
FAST_TIER = os.environ.get("KGYM_TEST_TIER") == "fast"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            where = item.path.resolve().relative_to(TESTS)
        except ValueError:
            continue
        for marker in (*FOLDER_MARKERS.get(where.parts[0], ()), *MODULE_MARKERS.get(where.as_posix(), ())):
            item.add_marker(marker)


class SandboxInFastTier(RuntimeError):
    """A test of the fast tier started a sandbox."""


@pytest.fixture(autouse=True)
def _task_roots_per_test() -> Iterator[None]:
    """Task roots a test adds for its process (`add_task_root`, an import's `--tasks`) end with it: a
    later test in the same xdist worker otherwise lists tasks its own CLI call (which sets the roots
    from its `--tasks` again) cannot find."""
    from gym.tasks import paths

    saved = list(paths._EXTRA_ROOTS)
    yield
    paths._EXTRA_ROOTS[:] = saved


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
