"""Find and load task files, validating strictly.

Errors read `file: key: reason`. Loading a suite never fails as a whole: a
broken task is reported in `LoadReport.errors` and the others still load.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from gym.errors import TaskLoadError
from gym.tasks.model import Task, TaskSpec
from gym.tasks.paths import references_dir as default_references_dir
from gym.tasks.paths import task_roots
from gym.tasks.splits import SPLITS, SPLITS_FILE, SplitFile, family_key, read_splits, split_of, stored_dispatch


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
    """Load `folder/task.toml`; raise TaskLoadError with `file: key: reason` lines. Its split is the
    one `tasks_root`'s splits.json records (gym.tasks.splits), else the hashed one."""
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
    if spec.kernelbench is not None:
        _check_problem_file(path, folder / spec.kernelbench.problem_file, spec.kernelbench.sha256)
    else:
        for key in ("reference", "inputs", "oracle"):
            target = getattr(spec, key)
            if target is not None and not (refs / f"{target.split(':', 1)[0]}.py").is_file():
                raise TaskLoadError(f"{path}: {key}: no module {target.split(':', 1)[0]}.py in {refs}")
        if not (folder / "solution.py").is_file():
            raise TaskLoadError(f"{path}: (task): no solution.py beside the task file")
    # A task not yet recorded in splits.json takes its family's split: the family of its dispatched ops when it records them.
    split = split_of(spec.id, _recorded_splits(tasks_root), family_key(stored_dispatch(raw)) or None) if tasks_root is not None else None
    return Task(spec=spec, folder=folder.resolve(), references_dir=refs.resolve(), split=split)


_SPLIT_FILES: dict[Path, tuple[int, SplitFile]] = {}


def _recorded_splits(root: Path) -> SplitFile:
    """The root's splits.json (re-read when it changes); TaskLoadError when it is broken."""
    path = root / SPLITS_FILE
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return SplitFile()
    cached = _SPLIT_FILES.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        recorded = read_splits(root)
    except (ValidationError, OSError, UnicodeDecodeError) as error:
        raise TaskLoadError(f"{path}: (file): not a splits file: {str(error).splitlines()[0]}") from None
    _SPLIT_FILES[path] = (stamp, recorded)
    return recorded


def _check_problem_file(task_file: Path, problem: Path, sha256: str) -> None:
    """An imported task's copied source must be there and unchanged since the import."""
    try:
        data = problem.read_bytes()
    except OSError:
        raise TaskLoadError(f"{task_file}: kernelbench.problem_file: {problem.name} is missing beside the task file") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise TaskLoadError(f"{task_file}: kernelbench.sha256: {problem.name} changed since it was imported (re-run kgym import)")


def in_suite(task_id: str, suite: str | None) -> bool:
    """`suite` selects a task when it is the task's suite or a suite above it ("kb" holds "kb/l1/19_relu")."""
    if suite is None:
        return True
    return task_id.startswith(suite.rstrip("/") + "/")


def _task_folders(root: Path) -> list[Path]:
    """Every folder under `root` holding a task.toml (symlinked folders followed, each real folder once)."""
    found: list[Path] = []
    seen: set[str] = set()
    for folder, names, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            names[:] = []
            continue
        seen.add(real)
        names.sort()
        if "task.toml" in files and Path(folder) != root:
            found.append(Path(folder))
    return sorted(found)


def discover(
    tasks_root: Path | None = None,
    references_dir: Path | None = None,
    suite: str | None = None,
    include_degenerate: bool = False,
    split: str | None = None,
) -> LoadReport:
    """Load every task under `tasks_root` (default: every task root, in search order), skipping
    broken ones; tasks that `kgym check-tasks` marked degenerate only with `include_degenerate`;
    only those of `split` (train / val / test) when given.
    An id found in two roots loads from the first; the shadowed one is reported."""
    roots = [tasks_root] if tasks_root is not None else task_roots()
    report = LoadReport()
    if split is not None and split not in SPLITS:
        raise TaskLoadError(f"split: {split!r} is not one of {', '.join(SPLITS)}")
    if tasks_root is not None and not tasks_root.is_dir():
        report.errors.append(f"{tasks_root}: (folder): no tasks folder")
        return report
    seen: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder in _task_folders(root):
            task_id = "/".join(folder.relative_to(root).parts)
            if not in_suite(task_id, suite):
                continue
            if task_id in seen:
                report.errors.append(f"{folder / 'task.toml'}: id: {task_id} is already loaded from {seen[task_id]}; this one is ignored")
                continue
            try:
                task = load_task(folder, references_dir, root)
            except TaskLoadError as error:
                report.errors.append(str(error))
                continue
            seen[task_id] = root
            if split is not None and task.split != split:
                continue
            if task.spec.degenerate is None or include_degenerate:
                report.tasks.append(task)
    return report


def find_task(task_id: str, tasks_root: Path | None = None, references_dir: Path | None = None) -> Task:
    """Load one task by id ("suite/name", "kb/l1/19_relu"), from the first root that holds it
    (a degenerate task loads too: asking for it by name is deliberate)."""
    roots = [tasks_root] if tasks_root is not None else task_roots()
    if "/" in task_id and ".." not in task_id.split("/") and not task_id.startswith("/"):
        for root in roots:
            folder = root / task_id
            if (folder / "task.toml").is_file():
                return load_task(folder, references_dir, root)
    known = [task.id for task in discover(tasks_root, references_dir).tasks]
    shown = ", ".join(known[:40]) + (f", ... ({len(known)} in all)" if len(known) > 40 else "")
    raise TaskLoadError(f"{task_id}: no such task (known: {shown or 'none'})")
