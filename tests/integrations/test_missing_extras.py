"""Each RL-framework adapter without its framework installed ends in one line naming the extra to
install (checked with the framework hidden, so it runs in every venv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# adapter -> (extra, the framework's top-level package, what needs it: "" for the module itself).
# verl's reward function is a plain function that needs no verl; its tool and interaction classes do.
ADAPTERS = {
    "openenv": ("openenv", "openenv", ""),
    "verifiers": ("verifiers", "verifiers", ""),
    "verl": ("verl", "verl", "KernelGymTool"),
    "skyrl": ("skyrl", "skyrl_gym", ""),
}
PROBE = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {package!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
from gym.extras import MissingExtra
try:
    import gym.integrations.{adapter} as adapter
    if {attribute!r}:
        getattr(adapter, {attribute!r})
except MissingExtra as error:
    print(error)
    raise SystemExit(3)
"""


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_missing_framework_is_one_line_naming_its_extra(adapter: str) -> None:
    extra, package, attribute = ADAPTERS[adapter]
    probe = PROBE.format(package=package, adapter=adapter, attribute=attribute)
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    feature = f"gym.integrations.{adapter}" + (f".{attribute}" if attribute else "")
    assert run.stdout.splitlines() == [f"{feature} needs the {extra!r} extra: pip install 'kernel-gym[{extra}]'"]
