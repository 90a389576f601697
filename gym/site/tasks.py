"""Task details for the task pages, from the tasks themselves (or what the runs recorded, when a task is gone)."""

from __future__ import annotations

from gym.site.schema import TaskPageInfo
from gym.site.urls import task_page


def task_info(task_id: str, graded_versions: list[int]) -> TaskPageInfo:
    """Title, description and contract of `task_id` from this checkout's tasks/ folder."""
    from gym.tasks.loader import TaskLoadError, find_task
    from gym.tasks.prompt import describe_check

    versions = sorted(set(graded_versions))
    try:
        task = find_task(task_id)
    except TaskLoadError as error:
        reason = str(error).split("\n", 1)[0]
        if "no such task" in reason:
            reason = "no such task"
        return TaskPageInfo(
            id=task_id,
            url=task_page(task_id),
            present=False,
            title=None,
            description=None,
            current_version=None,
            graded_versions=versions,
            contract=[],
            note=f"This task is not in this checkout's tasks/ folder ({reason}); the page shows only what the runs recorded.",
        )
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
