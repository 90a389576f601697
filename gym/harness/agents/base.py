"""The agent interface and its registry.

An `Agent` starts one `AgentEpisode` per task. The runner hands the episode
every observation; the episode answers with the next `Action`, or None to give
up. `history` carries the (action, observation) pairs of attempts graded before
a resumed run, so an agent can rebuild its context without regrading them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from gym import registry
from gym.errors import AgentError, UnknownPlugin
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
_REGISTRY: dict[str, str] = registry.entries("agent", scan=False)
registry.register("agent", "solutions", "gym.harness.agents.solutions:SolutionsAgent")
registry.register("agent", "replay", "gym.harness.agents.replay:ReplayAgent")
registry.register("agent", "openai", "gym.harness.agents.openai_agent:OpenAIAgent")


def register_agent(name: str, target: str) -> None:
    """Register `module:Class` (an Agent subclass taking keyword options) under `name` (gym.registry's "agent" kind)."""
    registry.register("agent", name, target)


def available_agents() -> list[str]:
    return registry.names("agent")


def make_agent(name: str, **options: Any) -> Agent:
    try:
        cls = registry.lookup("agent", name)
    except UnknownPlugin as error:
        raise AgentError(str(error)) from None
    return cls(**options)
