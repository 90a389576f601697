"""The agent interface and its registry.

An `Agent` starts one `AgentEpisode` per task. The runner hands the episode
every observation; the episode answers with the next `Action`, or None to give
up. `history` carries the (action, observation) pairs of attempts graded before
a resumed run, so an agent can rebuild its context without regrading them.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any

from gym.errors import AgentError
from gym.schema.episode import Action, Observation


class AgentEpisode(ABC):
    """One task's conversation between an agent and the Env."""

    @abstractmethod
    def propose(self, observation: Observation) -> Action | None:
        """The next submission, given the latest observation; None to stop."""

    def transcript(self) -> list[dict[str, Any]] | None:
        """What the agent saw and said so far (saved with every attempt); None when it has none."""
        return None


class Agent(ABC):
    # Registered name, e.g. "solutions".
    name: str = ""
    # Model name for LLM agents.
    model: str | None = None

    @abstractmethod
    def start(self, first: Observation, history: list[tuple[Action, Observation]]) -> AgentEpisode:
        """A new episode on `first.task_id`; `history` holds attempts already graded (resume)."""

    def options(self) -> dict[str, Any]:
        """Settings recorded in run.json (never secrets)."""
        return {}


# name -> "module:Class"; modules load on demand, so the openai package is only needed by the openai agent.
_REGISTRY: dict[str, str] = {
    "solutions": "gym.harness.agents.solutions:SolutionsAgent",
    "replay": "gym.harness.agents.replay:ReplayAgent",
    "openai": "gym.harness.agents.openai_agent:OpenAIAgent",
}


def register_agent(name: str, target: str) -> None:
    """Register `module:Class` (an Agent subclass taking keyword options) under `name`."""
    _REGISTRY[name] = target


def available_agents() -> list[str]:
    return sorted(_REGISTRY)


def make_agent(name: str, **options: Any) -> Agent:
    if name not in _REGISTRY:
        raise AgentError(f"unknown agent {name!r}; known: {', '.join(available_agents())}")
    module_name, class_name = _REGISTRY[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)
