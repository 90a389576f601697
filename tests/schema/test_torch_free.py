"""The schema package and the HTTP client import without torch (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCHEMA = "gym.schema.result, gym.schema.aggregates, gym.schema.episode, gym.schema.http, gym.schema.outcomes, gym.schema.ranking, gym.schema.records"
CHECK = "import sys, {modules}; print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:5])"


@pytest.mark.parametrize("modules", [SCHEMA, "gym.serve.client"])
def test_imports_without_torch(modules: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHECK.format(modules=modules)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"importing {modules} pulled in torch: {done.stdout.strip()}"
