"""What the server and the MCP tools answer about a task: `TaskInfo` and `TaskDetail` built from a `Task`.

The wire models live in the torch-free `gym.schema.http`; building them needs
the loaded task and its prompt, so the builders live here, on the harness side.
"""

from __future__ import annotations

from gym.schema.http import TaskDetail, TaskInfo
from gym.schema.result import Dsl
from gym.tasks.metadata import task_metadata
from gym.tasks.model import Task
from gym.tasks.prompt import render_prompt


def task_info(task: Task, measure: bool = False) -> TaskInfo:
    """The task's id, suite, version, title, dtypes, contract check kinds, split and metadata (as stored:
    a listing never runs references; `measure` fills in what only running the reference tells)."""
    spec = task.spec
    return TaskInfo(
        id=task.id,
        suite=task.suite,
        version=spec.version,
        title=spec.title,
        dtypes=list(spec.dtypes),
        contract=[check.kind for check in spec.contract],
        split=task.split,
        metadata=task_metadata(task, measure=measure),
    )


def task_detail(task: Task, dsl: Dsl = "triton") -> TaskDetail:
    """`task_info` plus the description and the prompt an agent works from (asking for kernels in `dsl`)."""
    return TaskDetail(**task_info(task, measure=True).model_dump(), description=task.spec.description, prompt=render_prompt(task, dsl=dsl))
