"""Where the task suite and references live.

Defaults to the checkout this package sits in; `KGYM_ROOT` points elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    override = os.environ.get("KGYM_ROOT")
    if override:
        return Path(override).resolve()
    return Path(__file__).resolve().parents[2]


def tasks_dir() -> Path:
    return project_root() / "tasks"


def references_dir() -> Path:
    return project_root() / "references"
