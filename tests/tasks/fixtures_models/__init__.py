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
