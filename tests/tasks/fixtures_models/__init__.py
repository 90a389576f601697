"""Honest kernels for imported model tasks (see README.md), and the shared import the tests grade them on."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent


def shared_root(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict[str, str]]) -> tuple[Path, dict[str, str]]:
    """A task root that `build(root)` fills once per test run (shared by pytest-xdist's workers, which
    would each import it again), and what `build` returned (kept next to it as JSON)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    root = shared / name
    record = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            root.mkdir(parents=True, exist_ok=True)
            record.write_text(json.dumps(build(root)))
        return root, json.loads(record.read_text())


def import_cases(root: Path, cases: dict[str, tuple[str, str]], kind: str, keep: Callable[[str, str], bool] | None = None) -> dict[str, str]:
    """Import the `kind` tasks named in `cases` (pattern -> (model, kernel file)) from one block of each
    model into `root`: pattern -> the first task id of that pattern whose problem source `keep(pattern, source)` accepts."""
    from gym.tasks.models.importer import import_models

    chosen: dict[str, str] = {}
    for model in sorted({model for model, _ in cases.values()}):
        wanted = {name for name, (owner, _) in cases.items() if owner == model}
        report = import_models(
            root, [model], layers=1, kinds=(kind,), select=lambda _, traced, name, wanted=wanted, model=model: traced == model and name in wanted
        )
        assert report.count("failed") == 0, [op for op in report.ops if op.outcome == "failed"]
        for op in report.ops:
            if op.outcome != "new" or op.task_id is None:
                continue
            name = op.op.removeprefix(f"{kind}:")
            if keep is None or keep(name, (root / op.task_id / "problem.py").read_text()):
                chosen.setdefault(name, op.task_id)
    assert set(chosen) == set(cases), chosen
    return chosen
