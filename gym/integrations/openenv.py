"""An openenv-core client for `kgym serve`: `KernelGymEnv`, with OpenEnv-typed actions and observations.

    from gym.integrations.openenv import KernelAction, KernelGymEnv

    with KernelGymEnv(base_url="http://127.0.0.1:8000").sync() as env:   # token: KGYM_SERVE_TOKEN
        result = env.reset(task_id="l1/vector_add")
        print(result.observation.prompt)
        result = env.step(KernelAction(code=open("kernel.py").read()))
        print(result.reward, result.done, result.observation.feedback)

It is openenv-core's own `EnvClient` (one WebSocket session per client, `.sync()` for blocking use),
speaking the gym's `/ws` protocol; the bearer token (`token=`, else `KGYM_SERVE_TOKEN`) rides on the
handshake. `openenv validate --url http://127.0.0.1:8000` passes against `kgym serve` (the validator
sends no token, so run it against a loopback server started without one). `openenv.yaml` at the
repository root describes the environment. Needs `pip install 'kernel-gym[openenv]'`.

Masking: a step whose grade was a masked infra_error (the gym's failure, not the submission's; the server's
observation says `masked`) comes back with `reward=None`, OpenEnv's own "no reward" (StepResult.reward and
Observation.reward are optional), so a trainer drops it rather than rewarding it; the server's number
(`RewardConfig.infra`, never more than a wrong answer) stays in `metadata["gym_reward"]`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gym.extras import require

require("openenv", "gym.integrations.openenv")

from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402
from openenv.core.env_server.types import Action, Observation, State  # noqa: E402
from websockets.asyncio.client import connect as ws_connect  # noqa: E402

from gym.harness.reward import is_masked  # noqa: E402
from gym.schema.episode import CODE_DESCRIPTION, MAX_CODE_BYTES, GradeSummary  # noqa: E402
from gym.schema.result import GradeResult  # noqa: E402
from gym.serve.auth import auth_headers  # noqa: E402

ENV_NAME = "kernel-gym"


class KernelAction(Action):
    """One submission: the whole Python file."""

    code: str = Field(min_length=1, max_length=MAX_CODE_BYTES, description=CODE_DESCRIPTION)
    task_id: str | None = Field(
        default=None,
        description="The episode's task, when the caller wants the server to check it (must match the reset's).",
    )


class KernelObservation(Observation):
    """What reset and step answer (`done`, `reward`, `metadata` from OpenEnv's base)."""

    task_id: str = Field(description='The task, e.g. "l1/softmax".')
    prompt: str = Field(description="The task's full prompt: reference, signature, shapes, contract, allowed torch calls.")
    attempt: int = Field(description="Attempts graded so far in this episode.")
    attempts_left: int = Field(description="Attempts left before the episode ends.")
    summary: GradeSummary | None = Field(default=None, description="The last grade's status, speedups and flags; None after reset.")
    grade: GradeResult | None = Field(default=None, description="The last grade in full; None after reset.")
    feedback: str = Field(default="", description="Written for the agent: what failed, where, likely causes.")
    masked: bool = Field(
        default=False,
        description="True when the last grade was a masked infra_error (the gym's failure): `reward` is then None, a sample to drop.",
    )


class KernelState(State):
    """The episode's state (`episode_id`, `step_count` from OpenEnv's base; step_count = attempts)."""

    task_id: str | None = Field(default=None, description="The task being solved; None before the first reset.")
    attempts: int = Field(default=0, description="Attempts graded so far.")
    max_attempts: int = Field(default=0, description="Attempts allowed per episode.")
    best: GradeSummary | None = Field(default=None, description="The best grade so far.")
    best_reward: float | None = Field(default=None, description="The best grade's reward.")
    rewards: list[float] = Field(default_factory=list, description="Every attempt's reward, in order.")
    reward_preset: str = Field(default="default", description='The server\'s reward preset (`kgym serve --reward`), e.g. "kernrl".')
    returns: str = Field(
        default="best", description='How the server makes the episode\'s return (`kgym serve --returns`): "best", "last", "discounted(<gamma>)".'
    )
    episode_return: float | None = Field(default=None, description="The episode's return so far under `returns`; None before the first attempt.")
    done: bool = Field(default=False, description="True once the episode is over.")


def masked_reward(observation: dict[str, Any], reward: Any, metadata: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A step's (reward, metadata): reward None when the observation's grade was a masked infra_error (the
    server's `masked`, else derived from the grade), the server's number kept in metadata["gym_reward"]."""
    masked = bool(observation.get("masked"))
    grade = observation.get("grade")
    if not masked and isinstance(grade, dict) and "masked" not in observation:
        # A server from before `Observation.masked`: the grade says it (GradeResult derives masked when absent).
        masked = is_masked(GradeResult.model_validate(grade))
    if not masked:
        return reward, metadata
    return None, {**metadata, "gym_reward": reward, "masked": True}


class KernelGymEnv(EnvClient[KernelAction, KernelObservation, KernelState]):
    """openenv-core's WebSocket client for `kgym serve`; `reset(task_id=..., seed=..., suite=...)`, `step(KernelAction)`."""

    # EnvClient's connection (a websockets ClientConnection once connected).
    _ws: Any

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, token: str | None = None, **options: Any) -> None:
        """`token` (default: KGYM_SERVE_TOKEN) is sent on the handshake; `options` go to EnvClient
        (connect_timeout_s, message_timeout_s: a grade can take minutes, so the default here is 900 s)."""
        options.setdefault("message_timeout_s", 900.0)
        super().__init__(base_url, **options)
        self._headers = auth_headers(token)

    async def connect(self) -> KernelGymEnv:
        """Open the WebSocket with the bearer token on the handshake (ConnectionError when refused)."""
        if self._ws is not None:
            return self
        try:
            self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size, additional_headers=self._headers)
        except Exception as error:  # EnvClient reports any failure to connect as a ConnectionError
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {error}") from error
        return self

    def _step_payload(self, action: KernelAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[KernelObservation]:
        fields = {key: value for key, value in payload.get("observation", {}).items() if key in KernelObservation.model_fields}
        reward, metadata = masked_reward(fields, payload.get("reward"), payload.get("metadata") or {})
        observation = KernelObservation(**fields, reward=reward, done=bool(payload.get("done")), metadata=metadata)
        return StepResult(observation=observation, reward=reward, done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, Any]) -> KernelState:
        return KernelState(**payload, step_count=int(payload.get("attempts", 0)))
