"""A real bwrap sandbox for warm-pool tests, on a uid range of the test's own, pools stopped afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from gym.sandbox import available_sandboxes
from gym.sandbox.warm_pool import shutdown_pools

REQUIRED = {name for name in os.environ.get("KGYM_REQUIRE_SANDBOXES", "").split(",") if name}


def bwrap_with_pools(monkeypatch: pytest.MonkeyPatch, uid_offset: int) -> Iterator[str]:
    """Yield "bwrap" with KGYM_SANDBOX_UID at KGYM_TEST_UID_BASE (62000) + `uid_offset` + 100 * xdist worker
    (apart from the other sandbox tests' 62000, 64000, 66000 ranges); skip, or fail where
    KGYM_REQUIRE_SANDBOXES names bwrap, when it cannot run; stop every warm pool afterwards."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    monkeypatch.setenv("KGYM_SANDBOX_UID", str(int(os.environ.get("KGYM_TEST_UID_BASE", "62000")) + uid_offset + 100 * int(worker or 0)))
    problem = available_sandboxes()["bwrap"].check()
    if problem:
        if "bwrap" in REQUIRED:
            pytest.fail(f"bwrap is required here but unavailable: {problem}")
        pytest.skip(f"bwrap unavailable: {problem}")
    try:
        yield "bwrap"
    finally:
        shutdown_pools()
