"""`replay`: submits files from a folder laid out by task id.

FOLDER/l1/softmax.py          one submission for l1/softmax
FOLDER/l1/softmax/1.py 2.py   or several, submitted in name order (one per attempt)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gym.errors import AgentError
from gym.harness.agents.base import Agent, AgentEpisode
from gym.schema.episode import Action, Observation


def submissions_for(folder: Path, task_id: str) -> list[Path]:
    single = folder / f"{task_id}.py"
    many = folder / task_id
    files = sorted(many.glob("*.py")) if many.is_dir() else []
    return ([single] if single.is_file() else []) + files


class _ReplayEpisode(AgentEpisode):
    def __init__(self, files: list[Path], done: int) -> None:
        self.files = files
        self.next = done

    def propose(self, observation: Observation) -> Action | None:
        if self.next >= len(self.files):
            return None
        path = self.files[self.next]
        self.next += 1
        return Action(code=path.read_text(encoding="utf-8"))


class ReplayAgent(Agent):
    name = "replay"

    def __init__(self, folder: str | Path | None = None, **options: Any) -> None:
        if options:
            raise AgentError(f"unknown replay option(s): {', '.join(options)}")
        if folder is None:
            raise AgentError("the replay agent needs a folder of submissions (--replay-dir DIR)")
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise AgentError(f"replay folder {self.folder} does not exist")

    def options(self) -> dict[str, Any]:
        return {"folder": str(self.folder)}

    def start(self, first: Observation, history: list[tuple[Action, Observation]]) -> AgentEpisode:
        return _ReplayEpisode(submissions_for(self.folder, first.task_id), len(history))
