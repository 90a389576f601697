"""`solutions`: submits each task's shipped known-good solution (what `make demo` runs)."""

from __future__ import annotations

from typing import Any

from gym.errors import AgentError
from gym.harness.agents.base import Agent, AgentEpisode
from gym.schema.episode import Action, Observation
from gym.tasks.loader import find_task


class _FileEpisode(AgentEpisode):
    def __init__(self, code: str) -> None:
        self.code = code
        self.sent = False

    def propose(self, observation: Observation) -> Action | None:
        if self.sent:
            return None
        self.sent = True
        return Action(code=self.code)


class SolutionsAgent(Agent):
    name = "solutions"

    def __init__(self, **options: Any) -> None:
        if options:
            raise AgentError(f"the solutions agent takes no options (got {', '.join(options)})")

    def start(self, first: Observation, history: list[tuple[Action, Observation]]) -> AgentEpisode:
        path = find_task(first.task_id).solution_path
        if not path.is_file():
            raise AgentError(f"{first.task_id} ships no solution.py")
        episode = _FileEpisode(path.read_text(encoding="utf-8"))
        episode.sent = bool(history)
        return episode
