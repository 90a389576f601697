"""What the verl roles share: the names rows and records use, the settings of where grades run, this
process's episode sources, and one rollout trajectory's episode (the tool's and the interaction's)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gym import settings
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config
from gym.integrations.episodes import EpisodeSource, KernelEpisode, Turn
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.result import Status
from gym.serve.auth import serve_token

# The environment variables the settings read when verl gives none (beside KGYM_SERVER_URL, KGYM_SERVE_TOKEN).
SANDBOX_VARIABLE = "KGYM_SANDBOX"
ATTEMPTS_VARIABLE = "KGYM_MAX_ATTEMPTS"

# The multi-turn tool's name, as the model calls it.
TOOL_NAME = "submit_kernel"
# The interaction's name in interaction_config.yaml, which the rows' `extra_info.interaction_kwargs.name` select.
INTERACTION_NAME = "kernel_gym"
# The key of the episode record in verl's per-sample extra fields (and so in `extra_info` at reward time).
EPISODE_FIELD = "kgym_episode"
# What `status` says when a turn held no code to grade.
NO_CODE = "no_code"


# ---------------------------------------------------------------- settings and the shared episode sources


class GymSettings(BaseModel):
    """Where and how grades run; `from_env` fills what is not given from the environment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server_url: str | None = Field(default=None, description="A running `kgym serve` (default KGYM_SERVER_URL); None grades in this process.")
    token: str | None = Field(default=None, repr=False, description="The served gym's bearer token (default KGYM_SERVE_TOKEN).")
    sandbox: str = Field(default=DEFAULT_SANDBOX, description="Sandbox of in-process grades (default KGYM_SANDBOX, else bwrap).")
    max_attempts: int = Field(default=3, ge=1, description="Submissions per multi-turn episode (default KGYM_MAX_ATTEMPTS, else 3).")
    reward: RewardConfig = Field(
        default_factory=RewardConfig,
        description='The gym\'s reward function of a grade: a RewardConfig or a preset\'s name ("kernrl", "kernelbench-fast-1.5", ...).',
    )
    timeout_s: float = Field(default=900.0, gt=0, description="How long one request to a served gym may take.")
    returns: ReturnConfig | None = Field(
        default=None,
        description='How a multi-turn episode\'s turn rewards make its score: "best" (None: the default), "last", "discounted", "kevin" (discounted, 0.4), or a ReturnConfig.',
    )
    discount: float | None = Field(default=None, ge=0, le=1, description="gamma of the discounted return; given alone, the score is the discounted sum.")

    @property
    def return_config(self) -> ReturnConfig:
        """The episode's return: `returns` with `discount` (gym.harness.reward.as_return_config)."""
        return as_return_config(self.returns, self.discount)

    @classmethod
    def from_env(cls, **given: Any) -> GymSettings:
        """Settings from `given` (None values skipped), else the environment, else the defaults."""
        values: dict[str, Any] = {
            "server_url": settings.server_url(),
            "token": serve_token(),
            "sandbox": settings.adapter_sandbox() or DEFAULT_SANDBOX,
        }
        attempts = settings.adapter_attempts()
        if attempts is not None:
            values["max_attempts"] = attempts
        values.update({key: value for key, value in given.items() if value is not None})
        return cls.model_validate(values)


_SOURCES: dict[str, EpisodeSource] = {}
_SOURCES_LOCK = threading.Lock()


def episode_source(settings: GymSettings | None = None) -> EpisodeSource:
    """This process's EpisodeSource for `settings` (default `GymSettings.from_env()`), made once under a lock."""
    settings = settings or GymSettings.from_env()
    key = settings.model_dump_json()
    with _SOURCES_LOCK:
        source = _SOURCES.get(key)
        if source is None:
            source = EpisodeSource(
                server_url=settings.server_url,
                token=settings.token,
                max_attempts=settings.max_attempts,
                sandbox=settings.sandbox,
                reward=settings.reward,
                timeout_s=settings.timeout_s,
                returns=settings.return_config,
            )
            _SOURCES[key] = source
        return source


def close_sources() -> None:
    """Close every source made here (their in-process executors); the next call makes fresh ones."""
    with _SOURCES_LOCK:
        sources = list(_SOURCES.values())
        _SOURCES.clear()
    for source in sources:
        source.close()


# ---------------------------------------------------------------- one trajectory's episode (async, for the tool and the interaction)


class EpisodeRecord(BaseModel):
    """A multi-turn episode's outcome, which `KernelGymTool` leaves in the sample's extra fields for `compute_score`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The episode's task.")
    score: float = Field(description="The episode's return (GymSettings.returns): by default the best reward of its turns.")
    passed: bool = Field(description="True when a submission passed.")
    status: str = Field(description='Status of the best turn ("no_code" when no turn held code).')
    speedup: float | None = Field(default=None, description="Speedup of the best turn, when it passed and was measured.")
    attempts: int = Field(description="Submissions made (turns without code count).")
    masked: bool = Field(
        default=False, description="True when a turn's grade was a masked infra_error (the gym's failure): the sample should be dropped, not rewarded."
    )


class _Trajectory:
    """One rollout trajectory's episode: opened on first use, graded in a thread, one turn at a time.
    `over_hint` ends the answer to a turn that comes after the episode ended."""

    def __init__(self, source: EpisodeSource, task_id: str, over_hint: str = f"Stop calling {TOOL_NAME}.") -> None:
        self.source = source
        self.task_id = task_id
        self.over_hint = over_hint
        self.episode: KernelEpisode | None = None
        self.best: Turn | None = None
        self.touched = time.monotonic()
        self._lock = asyncio.Lock()

    async def _open(self) -> KernelEpisode:
        if self.episode is None:
            self.episode = await asyncio.to_thread(self.source.open, self.task_id)
        return self.episode

    async def open(self) -> None:
        """Open the episode now (a server's session, an unknown task's error) rather than on the first turn."""
        async with self._lock:
            await self._open()

    async def respond(self, text: str, tool_calls: Any = None) -> tuple[Turn, bool]:
        """Grade one turn: the turn, and False when the episode was over before it (nothing graded)."""
        async with self._lock:
            self.touched = time.monotonic()
            episode = await self._open()
            if episode.done:
                how = "it passed" if episode.passed else f"all {episode.max_attempts} attempts are spent"
                over = Turn(
                    message=f"The episode on {self.task_id} is over ({how}): nothing was graded. {self.over_hint}",
                    reward=episode.reward_config.failed,
                    done=True,
                    attempt=episode.attempts,
                )
                return over, False
            turn = await asyncio.to_thread(episode.respond, text, tool_calls)
            if self.best is None or turn.reward > self.best.reward:
                self.best = turn
            if turn.done:
                await asyncio.to_thread(episode.close)
            self.touched = time.monotonic()
            return turn, True

    def record(self) -> EpisodeRecord:
        best = self.best
        grade = best.grade if best is not None else None
        passed = grade is not None and grade.status == Status.passed
        return EpisodeRecord(
            task_id=self.task_id,
            score=self.episode_return,
            passed=passed,
            status=best.status.value if best is not None and best.status is not None else NO_CODE,
            speedup=grade.speedup_vs_eager if passed and grade is not None else None,
            attempts=self.episode.attempts if self.episode is not None else 0,
            masked=self.masked,
        )

    @property
    def masked(self) -> bool:
        """True when a graded turn was a masked infra_error (gym.integrations.episodes.KernelEpisode.masked)."""
        return self.episode is not None and self.episode.masked

    @property
    def best_reward(self) -> float:
        return self.best.reward if self.best is not None else self.source.reward.failed

    @property
    def episode_return(self) -> float:
        """The episode's return under the source's ReturnConfig (the best turn's reward by default)."""
        if self.episode is None or not self.episode.rewards:
            return self.source.reward.failed
        return self.episode.episode_return

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()


def _close_in_background(trajectory: _Trajectory) -> None:
    """Close an abandoned trajectory's episode (a served session) off the event loop; it may block on the network."""

    def close() -> None:
        try:
            trajectory.close()
        except Exception:  # noqa: BLE001 - best effort: the server's idle sessions expire anyway
            pass

    threading.Thread(target=close, name="kgym-verl-close", daemon=True).start()
