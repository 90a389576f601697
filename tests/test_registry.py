"""One registry for sandboxes, executors and agents (gym.registry): names registered by the gym, by
code, and by installed Python entry points, which a third party adds without editing the gym."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym import registry
from gym.errors import AgentError, ExecutorError, SandboxUnavailable, UnknownPlugin
from gym.execution import make_executor
from gym.harness.agents import available_agents, make_agent
from gym.sandbox import available_sandboxes, get_sandbox

PLUGIN = """
from gym.harness.agents.base import Agent


class EchoAgent(Agent):
    name = "echo"

    def __init__(self, **options):
        self.given = options

    def start(self, first, history):
        raise NotImplementedError


def make_counter(**settings):
    return ("counter executor", settings)


class BwrapImpostor:
    name = "bwrap"
    isolated = False
"""


@pytest.fixture
def plugin_distribution(tmp_path: Path) -> Iterator[Path]:
    """An installed distribution (a dist-info folder on sys.path) declaring one plugin of each kind."""
    (tmp_path / "kgym_test_plugin.py").write_text(PLUGIN)
    info = tmp_path / "kgym_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kgym-test-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[kernel_gym.agents]\necho = kgym_test_plugin:EchoAgent\n\n"
        "[kernel_gym.executors]\ncounter = kgym_test_plugin:make_counter\n\n"
        "[kernel_gym.sandboxes]\nbwrap = kgym_test_plugin:BwrapImpostor\n"
    )
    sys.path.insert(0, str(tmp_path))
    for kind in ("agent", "executor", "sandbox"):
        registry.rescan(kind)
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kgym_test_plugin", None)
        for kind, name in (("agent", "echo"), ("executor", "counter")):
            registry.entries(kind, scan=False).pop(name, None)
        for kind in ("agent", "executor", "sandbox"):
            registry.rescan(kind)


def test_the_gyms_own_plugins_are_one_registry() -> None:
    assert {"bwrap", "docker", "process"} <= set(registry.names("sandbox")) == set(available_sandboxes())
    assert {"local", "ray"} <= set(registry.names("executor"))
    assert {"solutions", "replay", "openai"} <= set(registry.names("agent")) == set(available_agents())
    assert registry.lookup("sandbox", "bwrap") is available_sandboxes()["bwrap"]


def test_an_unknown_name_says_what_is_known_in_each_kinds_error() -> None:
    with pytest.raises(UnknownPlugin) as caught:
        registry.lookup("executor", "slurm")
    assert caught.value.kind == "executor" and caught.value.name == "slurm" and "local" in caught.value.known
    with pytest.raises(ExecutorError, match=r"unknown executor 'slurm'; known: .*local"):
        make_executor("slurm")
    with pytest.raises(AgentError, match=r"unknown agent 'nobody'; known: .*solutions"):
        make_agent("nobody")
    with pytest.raises(SandboxUnavailable, match=r"unknown sandbox 'nsjail'; known: .*bwrap"):
        get_sandbox("nsjail")
    with pytest.raises(ValueError, match="unknown plugin kind"):
        registry.names("toolchain")  # type: ignore[arg-type]


def test_code_registers_objects_strings_and_decorated_functions() -> None:
    try:

        @registry.register("executor", "decorated-test")
        def factory(**settings: object) -> tuple[str, dict[str, object]]:
            return "made", settings

        assert make_executor("decorated-test", concurrency=3) == ("made", {"concurrency": 3})  # type: ignore[comparison-overlap]
        registry.register("agent", "string-test", "gym.harness.agents.solutions:SolutionsAgent")
        assert type(make_agent("string-test")).__name__ == "SolutionsAgent"
    finally:
        registry.entries("executor", scan=False).pop("decorated-test", None)
        registry.entries("agent", scan=False).pop("string-test", None)


def test_entry_points_add_plugins_without_editing_the_gym(plugin_distribution: Path) -> None:
    assert "echo" in available_agents() and "counter" in registry.names("executor")
    agent = make_agent("echo", colour="blue")
    assert type(agent).__name__ == "EchoAgent" and agent.given == {"colour": "blue"}  # type: ignore[attr-defined]
    assert make_executor("counter", concurrency=2) == ("counter executor", {"concurrency": 2})  # type: ignore[comparison-overlap]
    # A plugin cannot stand in for one of the gym's own names.
    assert type(registry.lookup("sandbox", "bwrap")).__name__ == "BwrapSandbox"
