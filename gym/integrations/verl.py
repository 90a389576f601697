"""Kernel Gym for verl (0.5 and later): a reward function, a multi-turn interaction and tool, and a dataset builder.

Single turn: verl's reward loop calls `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`
once per sample; the code in the completion's last ```python block is graded and the gym's own reward
(`gym.harness.reward.reward_for`) comes back as `{"score": ..., "acc": ..., "status": ..., ...}`:

    reward.custom_reward_function.path=pkg://gym.integrations.verl reward.custom_reward_function.name=compute_score

Multi-turn, two ways (one dataset serves both: the rows carry the tool's and the interaction's kwargs):

- `KernelGymTool` (verl >= 0.7, which has `verl.tools.base_tool`): a `BaseTool` named `submit_kernel`.
  Every call grades the code, answers with the grade and its feedback, and records the episode in the
  sample's extra fields, where `compute_score` finds it (`extra_info["kgym_episode"]`) and returns its
  best reward without grading again:

      actor_rollout_ref.rollout.multi_turn.enable=True
      actor_rollout_ref.rollout.multi_turn.tool_config_path=examples/verl/tool_config.yaml

- `KernelGymInteraction` (verl <= 0.7; verl 0.8 removed `verl.interactions`): a `BaseInteraction` that
  grades the code in each assistant reply and answers, as the next user turn, the grade and its feedback,
  until a pass or `max_attempts`. Each turn's reward goes to verl's turn scores, which reach
  `compute_score` in `extra_info`, so it scores the episode's best turn without grading again:

      actor_rollout_ref.rollout.multi_turn.enable=True
      actor_rollout_ref.rollout.multi_turn.interaction_config_path=examples/verl/interaction_config.yaml

Where grades run: in this process (sandbox `KGYM_SANDBOX`, default bwrap), or by the `kgym serve` at
`KGYM_SERVER_URL` (token `KGYM_SERVE_TOKEN`), which is how many reward workers share one grading
pool (`kgym serve --executor ray`). verl passes only the function, so these settings come from the
environment, or from `custom_reward_function.reward_kwargs` (`server_url`, `sandbox`, `reward`, `returns`,
`discount`) and the tool's and the interaction's `config:` (`GymSettings`). One `EpisodeSource` per setting
and process, made on first use under a lock; calls from many threads at once are safe.

`reward` is a RewardConfig (a dict) or a preset's name ("kernrl", "kernelgym", "kernelbench-fast-1.5", ...),
and a multi-turn episode scores its return: the best turn's reward by default, or `returns: last`,
`returns: discounted` (`discount: 0.4`), `returns: kevin` (discounted, 0.4) (gym.harness.reward.ReturnConfig).

Data: `write_parquet("l1", "train.parquet", multi_turn=True)` writes the rows verl's `RLHFDataset`
reads (`data_source`, `prompt` as a chat list, `ability`, `reward_model.ground_truth`, `extra_info`
with the task id, the tool's `create_kwargs` and the `interaction_kwargs`, `agent_name`); `examples/verl/`
has the rest.

Importing this module does not import verl (only `KernelGymTool` and `KernelGymInteraction` need it,
and are made on first access): the reward function and the dataset builder work wherever the gym does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field

from gym.errors import KernelGymError
from gym.extras import require
from gym.harness.auth import serve_token
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, episode_return, pass_floor
from gym.integrations.episodes import SERVER_URL_VARIABLE, ChatMessage, EpisodeSource, KernelEpisode, Turn, code_from_text, suite_prompts
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.result import Status

__all__ = [
    "DATA_SOURCE",
    "EPISODE_FIELD",
    "INTERACTION_NAME",
    "TOOL_NAME",
    "EpisodeRecord",
    "GymSettings",
    "InteractionTurn",
    "InteractionUnavailable",
    "Score",
    "VerlRow",
    "close_sources",
    "compute_score",
    "episode_source",
    "submit_kernel_schema",
    "suite_rows",
    "task_id_of",
    "write_parquet",
]

# The environment variables the settings read when verl gives none (beside KGYM_SERVER_URL, KGYM_SERVE_TOKEN).
SANDBOX_VARIABLE = "KGYM_SANDBOX"
ATTEMPTS_VARIABLE = "KGYM_MAX_ATTEMPTS"

# `data_source` of the rows (suffixed with the suite: "kernel_gym/l1"); verl groups validation metrics by it.
DATA_SOURCE = "kernel_gym"
# The multi-turn tool's name, as the model calls it.
TOOL_NAME = "submit_kernel"
# The interaction's name in interaction_config.yaml, which the rows' `extra_info.interaction_kwargs.name` select.
INTERACTION_NAME = "kernel_gym"
# The key of the episode record in verl's per-sample extra fields (and so in `extra_info` at reward time).
EPISODE_FIELD = "kgym_episode"
# verl's agent loops: one generation, or generation interleaved with tool calls.
SINGLE_TURN_AGENT = "single_turn_agent"
TOOL_AGENT = "tool_agent"
# What `status` says when a turn held no code to grade.
NO_CODE = "no_code"
# What `status` says of an interaction episode that did not pass (verl hands the reward function its turns' rewards only).
NOT_PASSED = "not_passed"
# What an interaction turn's `status` says when the episode had ended before it (nothing graded).
OVER = "over"


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
            "server_url": os.environ.get(SERVER_URL_VARIABLE) or None,
            "token": serve_token(),
            "sandbox": os.environ.get(SANDBOX_VARIABLE) or DEFAULT_SANDBOX,
        }
        if os.environ.get(ATTEMPTS_VARIABLE):
            values["max_attempts"] = int(os.environ[ATTEMPTS_VARIABLE])
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


# ---------------------------------------------------------------- the reward function


class Score(BaseModel):
    """What `compute_score` returns (as a dict): verl takes `score` as the reward and logs the rest per sample.

    The keys never vary, since verl's reward loop reads every sample's extra info by the first one's keys."""

    model_config = ConfigDict(extra="forbid")

    score: float = Field(description="The gym's reward (`reward_for` of the grade; `RewardConfig.failed` without code).")
    acc: float = Field(description="1.0 when the kernel passed, else 0.0 (verl's accuracy metric).")
    status: str = Field(description='The grade\'s status, or "no_code" when the completion held no submission.')
    speedup: float | None = Field(description="The pass's speedup vs eager PyTorch; None when not passed or not measured.")
    attempts: int = Field(description="Submissions graded: 1 for a single turn, the episode's count for a multi-turn one.")
    task_id: str = Field(description="The task graded.")


class EpisodeRecord(BaseModel):
    """A multi-turn episode's outcome, which `KernelGymTool` leaves in the sample's extra fields for `compute_score`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The episode's task.")
    score: float = Field(description="The episode's return (GymSettings.returns): by default the best reward of its turns.")
    passed: bool = Field(description="True when a submission passed.")
    status: str = Field(description='Status of the best turn ("no_code" when no turn held code).')
    speedup: float | None = Field(default=None, description="Speedup of the best turn, when it passed and was measured.")
    attempts: int = Field(description="Submissions made (turns without code count).")


def interaction_scores(extra_info: Any, task_id: str) -> list[float] | None:
    """The rewards `KernelGymInteraction` gave a sample's turns, as verl (<= 0.7) passes them to the reward
    function beside the row's `interaction_kwargs` on the same task: `extra_info["turn_scores"]` (the agent
    loop's, 0.6 and 0.7), else `extra_info["rollout_reward_scores"]["user_turn_rewards"]` (the sglang
    rollout's, 0.5); None when the sample had no interaction turn."""
    info = extra_info if isinstance(extra_info, dict) else {}
    kwargs = info.get("interaction_kwargs")
    if not isinstance(kwargs, dict) or str(kwargs.get("task_id") or "").strip() != task_id:
        return None
    rollout = info.get("rollout_reward_scores")
    for scores in (info.get("turn_scores"), rollout.get("user_turn_rewards") if isinstance(rollout, dict) else None):
        if scores is None or isinstance(scores, str | bytes | dict):
            continue
        try:
            values = [float(score) for score in scores]
        except (TypeError, ValueError):
            continue
        if values:
            return values
    return None


def task_id_of(extra_info: Any, ground_truth: Any = None) -> str | None:
    """The task a sample is about: `extra_info["task_id"]`, else the tool's create_kwargs, else the interaction's
    kwargs, else a string ground truth."""
    info = extra_info if isinstance(extra_info, dict) else {}
    task_id = info.get("task_id")
    if not task_id:
        tools = info.get("tools_kwargs")
        tool = tools.get(TOOL_NAME) if isinstance(tools, dict) else None
        create = tool.get("create_kwargs") if isinstance(tool, dict) else None
        task_id = create.get("task_id") if isinstance(create, dict) else None
    if not task_id:
        interaction = info.get("interaction_kwargs")
        task_id = interaction.get("task_id") if isinstance(interaction, dict) else None
    if not task_id and isinstance(ground_truth, str) and ground_truth.strip():
        task_id = ground_truth
    return str(task_id).strip() if task_id else None


def _turn_score(task_id: str, turn: Turn) -> Score:
    grade = turn.grade
    passed = grade is not None and grade.status == Status.passed
    return Score(
        score=turn.reward,
        acc=1.0 if passed else 0.0,
        status=turn.status.value if turn.status is not None else NO_CODE,
        speedup=grade.speedup_vs_eager if passed and grade is not None else None,
        attempts=turn.attempt,
        task_id=task_id,
    )


def compute_score(
    data_source: str | None = None,
    solution_str: str = "",
    ground_truth: Any = None,
    extra_info: dict[str, Any] | None = None,
    *,
    server_url: str | None = None,
    sandbox: str | None = None,
    reward: Mapping[str, Any] | str | None = None,
    returns: Mapping[str, Any] | str | None = None,
    discount: float | None = None,
    **_verl: Any,
) -> dict[str, Any]:
    """verl's reward function: grade the kernel in `solution_str` for the task in `extra_info["task_id"]`.

    A multi-turn sample that `KernelGymTool` graded already (`extra_info["kgym_episode"]`) scores its
    episode's return (by default its best reward; one whose model never called the tool is graded from its
    text, like a single turn). One that `KernelGymInteraction` graded (`interaction_scores`: verl's turn
    scores in `extra_info`) scores the return of its turns' rewards (`returns`, `discount`; default the best
    turn's); verl passes only the rewards, so its status is "passed" (a reward only a pass earns: at least
    `pass_floor`, e.g. `correct - speedup_weight`; under kernelbench-fast-p, `correct`: a pass faster than p)
    or "not_passed", and its speedup None. A completion without code scores `RewardConfig.failed` (status "no_code", nothing is opened);
    nothing the model wrote makes this raise. It raises ValueError when the sample names no task, and
    the gym's errors for an unknown task or an unreachable server. `server_url`, `sandbox`, `reward`
    (a RewardConfig dict or a preset's name), `returns` and `discount` come from
    `custom_reward_function.reward_kwargs`; other keywords verl adds (reward_router_address, ...) are ignored."""
    task_id = task_id_of(extra_info, ground_truth)
    if task_id is None:
        raise ValueError(f"no task id in extra_info (keys: {sorted(extra_info or {})}) or ground_truth {ground_truth!r} of a {data_source!r} sample")
    record = (extra_info or {}).get(EPISODE_FIELD)
    if isinstance(record, dict | EpisodeRecord):
        episode = EpisodeRecord.model_validate(record)
        if episode.task_id == task_id:
            return Score(
                score=episode.score,
                acc=1.0 if episode.passed else 0.0,
                status=episode.status,
                speedup=episode.speedup,
                attempts=episode.attempts,
                task_id=task_id,
            ).model_dump()
    settings = GymSettings.from_env(
        server_url=server_url,
        sandbox=sandbox,
        reward=RewardConfig.model_validate(reward if isinstance(reward, str) else dict(reward)) if reward is not None else None,
        returns=ReturnConfig.model_validate(returns if isinstance(returns, str) else dict(returns)) if returns is not None else None,
        discount=discount,
    )
    turns = interaction_scores(extra_info, task_id)
    if turns is not None:
        floor = pass_floor(settings.reward)
        passed = max(turns) >= (floor if floor is not None else settings.reward.correct)
        score = episode_return(turns, settings.return_config)
        return Score(
            score=score, acc=1.0 if passed else 0.0, status=Status.passed.value if passed else NOT_PASSED, speedup=None, attempts=len(turns), task_id=task_id
        ).model_dump()
    text = solution_str if isinstance(solution_str, str) else str(solution_str)
    if code_from_text(text) is None:
        # Nothing to grade: no episode, no executor, no request.
        return Score(score=settings.reward.failed, acc=0.0, status=NO_CODE, speedup=None, attempts=1, task_id=task_id).model_dump()
    turn = episode_source(settings).grade_once(task_id, text)
    return _turn_score(task_id, turn).model_dump()


# ---------------------------------------------------------------- one trajectory's episode (async, for the tool and the interaction)


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
        )

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


def submit_kernel_schema() -> dict[str, Any]:
    """The `submit_kernel` tool's schema in OpenAI function format (what the model sees)."""
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Submit your Triton kernel for grading. Returns the grade (status, speedup) and feedback on what failed; "
            "resubmit a fixed kernel until it passes or the attempts run out.",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "The whole Python file: imports, the @triton.jit kernels and `def kernel(...)` that launches them.",
                    }
                },
                "required": ["code"],
            },
        },
    }


def _code_argument(parameters: Any) -> str | None:
    code = parameters.get("code") if isinstance(parameters, dict) else None
    if not isinstance(code, str) or not code.strip():
        return None
    # A model that wraps the file in a fence inside the argument still means the file.
    return (code_from_text(code) or code) if "```" in code else code


def _define_tool() -> type:
    require("verl", "gym.integrations.verl.KernelGymTool")
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

    class KernelGymTool(BaseTool):
        """The `submit_kernel` tool of verl's ToolAgentLoop (verl >= 0.7): each call grades the code and answers the grade's feedback.

        tool_config.yaml: `class_name: gym.integrations.verl.KernelGymTool`, `config: {type: native}` plus any of
        GymSettings' fields (server_url, sandbox, max_attempts, reward, timeout_s, returns, discount; the token is better left to
        KGYM_SERVE_TOKEN); an unknown key is a ValueError. A sample's task comes from
        `extra_info.tools_kwargs.submit_kernel.create_kwargs.task_id` (what `suite_rows` writes).

        verl (0.7 and 0.9 alike) creates and releases an instance around every call, so the episode belongs to the trajectory
        (the loop's AgentData, passed as `agent_data`): attempts carry over between calls, the episode closes
        when it passes or runs out of attempts (or when the trajectory is dropped), and its record goes into
        `agent_data.extra_fields["kgym_episode"]`, which reaches `compute_score` as `extra_info["kgym_episode"]`."""

        def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
            unknown = sorted(set(config) - set(GymSettings.model_fields) - {"type"})
            if unknown:
                raise ValueError(f"{TOOL_NAME} config: unknown key(s) {', '.join(unknown)} (known: type, {', '.join(GymSettings.model_fields)})")
            self.settings = GymSettings.from_env(**{key: value for key, value in config.items() if key != "type"})
            super().__init__(config, tool_schema)
            self._tasks: dict[str, str] = {}
            self._instances: dict[str, _Trajectory] = {}
            self._owned: dict[str, _Trajectory] = {}
            self._by_agent: weakref.WeakKeyDictionary[Any, _Trajectory] = weakref.WeakKeyDictionary()

        def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
            return OpenAIFunctionToolSchema.model_validate(submit_kernel_schema())

        async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
            create_kwargs = kwargs.get("create_kwargs") or {}
            task_id = create_kwargs.get("task_id") or kwargs.get("task_id")
            if not task_id:
                raise ValueError(f"{TOOL_NAME} needs the sample's task id: extra_info.tools_kwargs.{TOOL_NAME}.create_kwargs.task_id")
            instance_id = instance_id or uuid4().hex
            self._tasks[instance_id] = str(task_id)
            return instance_id, ToolResponse()

        def _trajectory(self, instance_id: str, task_id: str, agent_data: Any) -> _Trajectory:
            trajectory: _Trajectory | None
            if agent_data is None:
                # No trajectory to hang it on: the episode lives as long as this instance.
                trajectory = self._owned.get(instance_id)
                if trajectory is None:
                    trajectory = self._owned[instance_id] = _Trajectory(episode_source(self.settings), task_id)
            else:
                trajectory = self._by_agent.get(agent_data)
                if trajectory is None or trajectory.task_id != task_id:
                    trajectory = _Trajectory(episode_source(self.settings), task_id)
                    self._by_agent[agent_data] = trajectory
                    weakref.finalize(agent_data, _close_in_background, trajectory)
            self._instances[instance_id] = trajectory
            return trajectory

        async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[ToolResponse, float, dict[str, Any]]:
            task_id = self._tasks.get(instance_id)
            if task_id is None:
                raise ValueError(f"no {TOOL_NAME} instance {instance_id!r}: create() it first")
            agent_data = kwargs.get("agent_data")
            trajectory = self._trajectory(instance_id, task_id, agent_data)
            code = _code_argument(parameters)
            calls = [{"function": {"name": TOOL_NAME, "arguments": {"code": code}}}] if code is not None else None
            turn, _ = await trajectory.respond("", calls)
            extra_fields = getattr(agent_data, "extra_fields", None)
            if isinstance(extra_fields, dict):
                extra_fields[EPISODE_FIELD] = trajectory.record().model_dump()
            metrics = {"status": turn.status.value if turn.status is not None else NO_CODE, "attempt": turn.attempt, "done": turn.done}
            return ToolResponse(text=turn.message), turn.reward, metrics

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            trajectory = self._instances.get(instance_id)
            return trajectory.episode_return if trajectory is not None else self.settings.reward.failed

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            self._tasks.pop(instance_id, None)
            self._instances.pop(instance_id, None)
            owned = self._owned.pop(instance_id, None)
            if owned is not None:
                await asyncio.to_thread(owned.close)

    KernelGymTool.__module__ = __name__
    KernelGymTool.__qualname__ = "KernelGymTool"
    return KernelGymTool


# ---------------------------------------------------------------- the multi-turn interaction (verl <= 0.7)


class InteractionUnavailable(KernelGymError):
    """The installed verl has no `verl.interactions` (verl 0.8 removed BaseInteraction)."""

    # The server lacks what the request needs (as MissingExtra).
    http_status = 501

    def __init__(self, version: str) -> None:
        super().__init__(
            f"gym.integrations.verl.KernelGymInteraction needs verl <= 0.7: verl {version} has no BaseInteraction (verl >= 0.8 removed verl.interactions); "
            "use KernelGymTool (multi-turn tools) instead, or pip install 'verl>=0.5,<0.8'"
        )
        self.version = version


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

    KernelGymInteraction.__module__ = __name__
    KernelGymInteraction.__qualname__ = "KernelGymInteraction"
    return KernelGymInteraction


_LAZY: dict[str, Callable[[], type]] = {"KernelGymTool": _define_tool, "KernelGymInteraction": _define_interaction}
_LAZY_LOCK = threading.Lock()


def __getattr__(name: str) -> Any:
    # KernelGymTool and KernelGymInteraction subclass verl's classes, so they are made (importing verl) only when asked for.
    define = _LAZY.get(name)
    if define is not None:
        with _LAZY_LOCK:
            if name not in globals():
                globals()[name] = define()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- a suite as verl's parquet rows


class RewardSpec(BaseModel):
    """verl's `reward_model` column; the naive reward manager passes `ground_truth` to compute_score."""

    model_config = ConfigDict(extra="forbid")

    style: str = Field(default="rule", description="verl's reward style: rule-based.")
    ground_truth: str = Field(description="The task id (compute_score reads extra_info.task_id first).")


class RowInfo(BaseModel):
    """verl's `extra_info` column: passed to compute_score; `tools_kwargs` to the tool's create(), `interaction_kwargs`
    to the interaction's start_interaction() (verl <= 0.7)."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="The row's position in its file.")
    split: str = Field(description='"train" or "val".')
    task_id: str = Field(description="The task the row is about (compute_score reads it).")
    suite: str = Field(description="The task's suite.")
    title: str = Field(description="The task's one-line title.")
    task_split: str = Field(default="train", description="The task's stable split in the gym: train, val or test.")
    metadata: dict[str, object] = Field(default_factory=dict, description="The task's metadata for curricula (gym.schema.task_metadata.TaskMetadata).")
    tools_kwargs: dict[str, dict[str, dict[str, str]]] = Field(description='{"submit_kernel": {"create_kwargs": {"task_id": ...}}}')
    interaction_kwargs: dict[str, str] = Field(description='{"name": "kernel_gym", "task_id": ...}: `name` selects the interaction of interaction_config.yaml.')


class VerlRow(BaseModel):
    """One prompt row of verl's RLHFDataset."""

    model_config = ConfigDict(extra="forbid")

    data_source: str = Field(description='"kernel_gym/<suite>"; verl groups validation metrics by it.')
    agent_name: str = Field(description="verl's agent loop for the row: single_turn_agent or tool_agent.")
    prompt: list[ChatMessage] = Field(description="The chat verl's rollout starts from: the task's prompt as one user message.")
    ability: str = Field(default="triton_kernels", description="verl's task category label.")
    reward_model: RewardSpec = Field(description="The reward style and ground truth (the task id).")
    extra_info: RowInfo = Field(description="What compute_score and the tool read about the row.")


SINGLE_TURN_INSTRUCTIONS = "## How to answer\n\nReply with the whole Python file in one ```python fenced block; it is graded once."


def multi_turn_instructions(max_attempts: int) -> str:
    # One wording for the tool (a call) and the interaction (a fenced block in the reply), so one dataset serves both.
    return (
        f"## How to answer\n\nSubmit the whole Python file with the `{TOOL_NAME}` tool (argument `code`) when it is offered, else as one "
        "```python fenced block in your reply. Each submission is answered with its grade and feedback; fix the kernel and submit again "
        f"until it passes. You have {max_attempts} submission(s); stop once it passes."
    )


def suite_rows(
    suite: str,
    *,
    task_ids: list[str] | None = None,
    multi_turn: bool = False,
    split: str = "train",
    max_attempts: int = 3,
    task_split: str | None = None,
) -> list[VerlRow]:
    """The rows of a suite's tasks (or of just `task_ids`; only the gym's `task_split` train / val / test when
    given, while `split` is verl's label for the file) for verl: one user prompt each, the task id in
    `extra_info` (also as the tool's create_kwargs and the interaction's kwargs) and `reward_model.ground_truth`,
    `agent_name` tool_agent when `multi_turn` (the agent loop of both the tool and the interaction)."""
    instructions = multi_turn_instructions(max_attempts) if multi_turn else SINGLE_TURN_INSTRUCTIONS
    rows = []
    for index, task in enumerate(suite_prompts(suite, task_ids, task_split)):
        rows.append(
            VerlRow(
                data_source=f"{DATA_SOURCE}/{task.suite}",
                agent_name=TOOL_AGENT if multi_turn else SINGLE_TURN_AGENT,
                prompt=[ChatMessage(role="user", content=f"{task.prompt.rstrip()}\n\n{instructions}\n")],
                reward_model=RewardSpec(ground_truth=task.task_id),
                extra_info=RowInfo(
                    index=index,
                    split=split,
                    task_id=task.task_id,
                    suite=task.suite,
                    title=task.title,
                    task_split=task.split,
                    metadata=task.metadata,
                    tools_kwargs={TOOL_NAME: {"create_kwargs": {"task_id": task.task_id}}},
                    interaction_kwargs={"name": INTERACTION_NAME, "task_id": task.task_id},
                ),
            )
        )
    return rows


def write_parquet(
    suite: str,
    path: str | Path,
    *,
    task_ids: list[str] | None = None,
    multi_turn: bool = False,
    split: str = "train",
    max_attempts: int = 3,
) -> Path:
    """Write `suite_rows(...)` to a parquet file (pyarrow, which verl brings) and return its path."""
    require("verl", "gym.integrations.verl.write_parquet", "pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = suite_rows(suite, task_ids=task_ids, multi_turn=multi_turn, split=split, max_attempts=max_attempts)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([row.model_dump() for row in rows]), out)
    return out
