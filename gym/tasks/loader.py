"""Find and load task files, validating strictly.

Errors read `file: key: reason`. Loading a suite never fails as a whole: a
broken task is reported in `LoadReport.errors` and the others still load.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from gym.errors import KernelGymError
from gym.tasks.model import Task, TaskSpec
from gym.tasks.paths import references_dir as default_references_dir
from gym.tasks.paths import tasks_dir as default_tasks_dir


class TaskLoadError(KernelGymError):
    """A task file that cannot be used; the message reads `file: key: reason`."""

    http_status = 404


@dataclass
class LoadReport:
    tasks: list[Task] = field(default_factory=list)
    # One `file: key: reason` line per problem.
    errors: list[str] = field(default_factory=list)


# Whole-model validators name their key as "key: reason" (pydantic gives them no location).
_KEYED_MESSAGE = re.compile(r"^Value error, (?P<key>[A-Za-z_][\w.]*): (?P<reason>.*)$", re.DOTALL)


def _format_validation(path: Path, error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        reason = item["msg"]
        if item["type"] == "extra_forbidden":
            reason = "unknown key"
        keyed = _KEYED_MESSAGE.match(reason)
        if keyed and not key:
            key, reason = keyed["key"], keyed["reason"]
        lines.append(f"{path}: {key or '(file)'}: {reason}")
    return "\n".join(lines)


def load_task(folder: Path, references_dir: Path | None = None, tasks_root: Path | None = None) -> Task:
    """Load `folder/task.toml`; raise TaskLoadError with `file: key: reason` lines."""
    path = folder / "task.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskLoadError(f"{path}: (file): not found") from None
    except tomllib.TOMLDecodeError as error:
        raise TaskLoadError(f"{path}: (syntax): {error}") from None
    except UnicodeDecodeError as error:
        raise TaskLoadError(f"{path}: (file): not UTF-8 text ({error.reason})") from None
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as error:
        raise TaskLoadError(_format_validation(path, error)) from None
    if tasks_root is not None:
        expected_id = "/".join(Path(os.path.relpath(folder.absolute(), tasks_root.absolute())).parts)
        if spec.id != expected_id:
            raise TaskLoadError(f"{path}: id: is {spec.id!r} but the folder says {expected_id!r}")
    refs = references_dir or default_references_dir()
    for key in ("reference", "inputs", "oracle"):
        target = getattr(spec, key)
        if target is not None and not (refs / f"{target.split(':', 1)[0]}.py").is_file():
            raise TaskLoadError(f"{path}: {key}: no module {target.split(':', 1)[0]}.py in {refs}")
    if not (folder / "solution.py").is_file():
        raise TaskLoadError(f"{path}: (task): no solution.py beside the task file")
    return Task(spec=spec, folder=folder.resolve(), references_dir=refs.resolve())


def discover(tasks_root: Path | None = None, references_dir: Path | None = None, suite: str | None = None) -> LoadReport:
    """Load every `<suite>/<name>/task.toml` under `tasks_root`, skipping broken ones."""
    root = tasks_root or default_tasks_dir()
    report = LoadReport()
    if not root.is_dir():
        report.errors.append(f"{root}: (folder): no tasks folder")
        return report
    for path in sorted(root.glob("*/*/task.toml")):
        if suite is not None and path.parent.parent.name != suite:
            continue
        try:
            report.tasks.append(load_task(path.parent, references_dir, root))
        except TaskLoadError as error:
            report.errors.append(str(error))
    return report


def find_task(task_id: str, tasks_root: Path | None = None, references_dir: Path | None = None) -> Task:
    """Load one task by id ("suite/name")."""
    root = tasks_root or default_tasks_dir()
    folder = root / task_id
    if "/" not in task_id or ".." in task_id or not (folder / "task.toml").is_file():
        known = ", ".join(task.id for task in discover(root, references_dir).tasks)
        raise TaskLoadError(f"{task_id}: no such task (known: {known or 'none'})")
    return load_task(folder, references_dir, root)
