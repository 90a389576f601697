"""The multi-turn interaction (verl <= 0.7; verl 0.8 removed `verl.interactions`): `KernelGymInteraction`, made
on first access of `gym.integrations.verl.KernelGymInteraction` (it subclasses verl's BaseInteraction, so this
module imports no verl)."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from typing import Any
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field

from gym.errors import InteractionUnavailable
from gym.extras import require
from gym.integrations.verl.common import INTERACTION_NAME, NO_CODE, GymSettings, _close_in_background, _Trajectory, episode_source
from gym.schema.result import Status

# What an interaction turn's `status` says when the episode had ended before it (nothing graded).
OVER = "over"


class InteractionTurn(BaseModel):
    """The metadata `KernelGymInteraction.generate_response` returns with each turn's answer."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The episode's task.")
    status: str = Field(description='The grade\'s status; "no_code" when the reply held no submission, "over" when the episode had ended before it.')
    attempt: int = Field(description="Submissions made so far, this one included (a reply without code counts).")
    attempts_left: int = Field(description="Submissions the episode has left.")
    done: bool = Field(description="True once a submission passed or the attempts are spent (verl then ends the rollout).")
    passed: bool = Field(description="True when this turn's submission passed.")
    reward: float = Field(description="This turn's reward (the gym's reward of its grade).")
    best_reward: float = Field(description="The best reward of the episode's turns so far.")
    episode_return: float = Field(description="The episode's return so far (what calculate_score returns; the best reward unless `returns` says otherwise).")
    speedup: float | None = Field(default=None, description="This turn's speedup vs eager PyTorch, when it passed and was measured.")
    error: str | None = Field(default=None, description="The grade's error text (compile, runtime, mismatch), cut to 500 characters.")
    masked: bool = Field(
        default=False,
        description="True when this turn's grade was a masked infra_error (the gym's failure): a sample to drop; its reward is RewardConfig.infra, never above a wrong answer.",
    )


def last_assistant_text(messages: Any) -> str:
    """The text of the last assistant message of a chat (content as a string or a list of text parts); "" when none."""
    for message in reversed(list(messages or [])):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role != "assistant":
            continue
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [part.get("text") if isinstance(part, dict) else part for part in content]
            return "\n".join(part for part in parts if isinstance(part, str))
        return ""
    return ""


def _define_interaction() -> type:
    require("verl", "gym.integrations.verl.KernelGymInteraction")
    if importlib.util.find_spec("verl.interactions") is None:
        import verl

        raise InteractionUnavailable(str(getattr(verl, "__version__", "(unknown version)")))
    from verl.interactions.base import BaseInteraction

    class KernelGymInteraction(BaseInteraction):
        """A kernel episode as a verl (<= 0.7) interaction: each assistant reply's code is graded and the grade and
        its feedback come back as the next user message, until a pass or `max_attempts` (then verl ends the rollout).

        interaction_config.yaml: `class_name: gym.integrations.verl.KernelGymInteraction`, `name: kernel_gym`
        (what the rows' `extra_info.interaction_kwargs.name` select), `config:` any of GymSettings' fields
        (server_url, sandbox, max_attempts, reward, timeout_s, returns, discount; the token is better left to KGYM_SERVE_TOKEN);
        an unknown key is a ValueError. The task comes from the interaction kwargs' `task_id` (what `suite_rows` writes).

        One instance serves every rollout of its agent loop: the episodes are kept per instance id (verl's
        request id) under a lock, each graded one turn at a time in a thread. An episode closes when it passes
        or runs out of attempts, on `finalize_interaction`, or, since verl's rollouts (0.5-0.7) never call it,
        when it has been idle `idle_s` seconds (checked as new episodes start). Turn rewards go to verl's
        turn scores, which `compute_score` scores without grading again."""

        # Seconds after which an idle episode is closed and forgotten.
        idle_s: float = 3600.0

        def __init__(self, config: dict[str, Any]) -> None:
            unknown = sorted(set(config) - set(GymSettings.model_fields) - {"name"})
            if unknown:
                raise ValueError(f"KernelGymInteraction config: unknown key(s) {', '.join(unknown)} (known: name, {', '.join(GymSettings.model_fields)})")
            self.settings = GymSettings.from_env(**{key: value for key, value in config.items() if key != "name"})
            super().__init__({"name": INTERACTION_NAME, **config})
            self._episodes: dict[str, _Trajectory] = {}
            self._lock = threading.Lock()

        def _new(self, task_id: Any) -> _Trajectory:
            if not task_id or not str(task_id).strip():
                raise ValueError(f"{type(self).__name__} needs the sample's task id: extra_info.interaction_kwargs.task_id")
            return _Trajectory(episode_source(self.settings), str(task_id).strip(), over_hint="Nothing more will be graded.")

        def _sweep(self) -> None:
            """Forget episodes idle for `idle_s` (closing those still open, off the event loop)."""
            cutoff = time.monotonic() - self.idle_s
            with self._lock:
                stale = [key for key, trajectory in self._episodes.items() if trajectory.touched < cutoff]
                dropped = [self._episodes.pop(key) for key in stale]
            for trajectory in dropped:
                if trajectory.episode is not None and not trajectory.episode.done:
                    _close_in_background(trajectory)

        async def _start(self, instance_id: str, task_id: Any) -> _Trajectory:
            trajectory = self._new(task_id)
            self._sweep()
            await trajectory.open()
            with self._lock:
                replaced = self._episodes.get(instance_id)
                self._episodes[instance_id] = trajectory
            if replaced is not None:
                _close_in_background(replaced)
            return trajectory

        async def start_interaction(self, instance_id: str | None = None, **kwargs: Any) -> str:
            """Open the episode on `kwargs["task_id"]` (the row's interaction_kwargs) and return its instance id."""
            instance_id = instance_id or uuid4().hex
            await self._start(instance_id, kwargs.get("task_id"))
            return instance_id

        def _episode(self, instance_id: str | None) -> _Trajectory | None:
            with self._lock:
                if instance_id is None:
                    # BaseInteraction's calculate_score() and finalize_interaction() name no instance: only a lone one is meant.
                    return next(iter(self._episodes.values())) if len(self._episodes) == 1 else None
                return self._episodes.get(instance_id)

        async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any) -> tuple[bool, str, float, dict[str, Any]]:
            """Grade the code in the last assistant message: (episode done, the grade and its feedback, the turn's reward, InteractionTurn)."""
            trajectory = self._episode(instance_id)
            if trajectory is None:
                if not kwargs.get("task_id"):
                    raise ValueError(f"no interaction {instance_id!r}: start_interaction() it first")
                # Forgotten after a long idle (or never started): verl passes the interaction kwargs here too.
                trajectory = await self._start(instance_id, kwargs["task_id"])
            turn, graded = await trajectory.respond(last_assistant_text(messages))
            episode = trajectory.episode
            grade = turn.grade
            passed = grade is not None and grade.status == Status.passed
            metadata = InteractionTurn(
                task_id=trajectory.task_id,
                status=(turn.status.value if turn.status is not None else NO_CODE) if graded else OVER,
                attempt=turn.attempt,
                attempts_left=max(0, episode.max_attempts - episode.attempts) if episode is not None else 0,
                done=turn.done,
                passed=passed,
                reward=turn.reward,
                best_reward=trajectory.best_reward,
                episode_return=trajectory.episode_return,
                speedup=grade.speedup_vs_eager if passed and grade is not None else None,
                error=grade.error[:500] if grade is not None and grade.error else None,
                masked=turn.masked,
            )
            return turn.done, turn.message, turn.reward, metadata.model_dump()

        async def calculate_score(self, instance_id: str | None = None, **kwargs: Any) -> float:
            """The episode's return so far (its best reward by default; `RewardConfig.failed` before any turn, or for an unknown instance)."""
            trajectory = self._episode(instance_id)
            return trajectory.episode_return if trajectory is not None else self.settings.reward.failed

        async def finalize_interaction(self, instance_id: str | None = None, **kwargs: Any) -> None:
            """Close the episode (a served gym's session) and forget it; an unknown instance is no error."""
            trajectory = self._episode(instance_id)
            if trajectory is None:
                return
            with self._lock:
                for key, value in list(self._episodes.items()):
                    if value is trajectory:
                        del self._episodes[key]
            await asyncio.to_thread(trajectory.close)

    # It lives where verl's class_name names it (and pickle finds it): the package, whose __getattr__ makes it.
    KernelGymInteraction.__module__ = __name__.rpartition(".")[0]
    KernelGymInteraction.__qualname__ = "KernelGymInteraction"
    return KernelGymInteraction
