"""A sandbox backend for a test, or the test skipped (failed where KGYM_REQUIRE_SANDBOXES names it)."""

from __future__ import annotations

import os

import pytest

from gym.sandbox import available_sandboxes

REQUIRED = {name for name in os.environ.get("KGYM_REQUIRE_SANDBOXES", "").split(",") if name}


def sandbox_or_skip(name: str) -> str:
    """`name` when that sandbox can run here; otherwise skip the test, or fail it when it is required."""
    sandbox = available_sandboxes().get(name)
    problem = "not registered" if sandbox is None else sandbox.check()
    if problem:
        if name in REQUIRED:
            pytest.fail(f"sandbox {name} is required here but unavailable: {problem}")
        pytest.skip(f"sandbox {name} unavailable: {problem}")
    return name
