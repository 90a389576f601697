"""Task details for the task pages, from the tasks themselves (or what the runs recorded, when a task is gone).

A task is looked up in every task root (gym.tasks.paths.task_roots: this checkout's
tasks/, --tasks and KGYM_TASKS folders, the root `kgym import` writes), as the runs
found it. One in none of them (a KernelBench task imported on another machine, a
retired one) is not an error: its page shows what the runs recorded and says why.
"""

from __future__ import annotations

from pathlib import Path

from gym.site.schema import TaskPageInfo
from gym.site.urls import task_page

GONE = "This task is not in this checkout's tasks/ folder or any other task root ({reason}); the page shows only what the runs recorded."


def _in_some_root(task_id: str, roots: list[Path]) -> bool:
    """Whether some root has `task_id`'s task file (checked directly: no suite is loaded to say it is missing)."""
    parts = task_id.split("/")
    if len(parts) < 2 or task_id.startswith("/") or any(part in ("", ".", "..") for part in parts):
        return False
    return any((root.joinpath(*parts) / "task.toml").is_file() for root in roots)


def _gone(task_id: str, versions: list[int], reason: str) -> TaskPageInfo:
    return TaskPageInfo(
        id=task_id,
        url=task_page(task_id),
        present=False,
        title=None,
        description=None,
        current_version=None,
        graded_versions=versions,
        contract=[],
        note=GONE.format(reason=reason),
    )


def task_info(task_id: str, graded_versions: list[int]) -> TaskPageInfo:
    """Title, description and contract of `task_id` from the first task root that holds it."""
    from gym.errors import TaskLoadError
    from gym.tasks.loader import find_task
    from gym.tasks.paths import task_roots
    from gym.tasks.prompt import describe_check

    versions = sorted(set(graded_versions))
    if not _in_some_root(task_id, task_roots()):
        return _gone(task_id, versions, "no such task")
    try:
        task = find_task(task_id)
    except (TaskLoadError, OSError) as error:
        reason = str(error).split("\n", 1)[0]
        if "no such task" in reason:
            reason = "no such task"
        return _gone(task_id, versions, reason)
    spec = task.spec
    stale = [version for version in versions if version != spec.version]
    note = f"Some grades were made against version(s) {', '.join(map(str, stale))}; the task is now at version {spec.version}." if stale else None
    return TaskPageInfo(
        id=task_id,
        url=task_page(task_id),
        present=True,
        title=spec.title,
        description=spec.description.strip(),
        current_version=spec.version,
        graded_versions=versions,
        contract=[describe_check(check) for check in spec.contract],
        note=note,
    )
