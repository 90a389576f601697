"""Kernel Gym as a SkyRL environment: a skyrl-gym `BaseTextEnv` registered under the name `kernel-gym`.

Each model turn's code (a ```python fenced block, or a `submit_kernel` tool call written in the text as
`<tool_call>{"name": "submit_kernel", "arguments": {"code": ...}}</tool_call>`) is graded; the
environment answers with the grade and its feedback as a user message, the step's reward is the gym's
reward (`gym.harness.reward.reward_for`), and the episode ends on a pass or when the attempts run out.
Grades run in this process (the local executor, sandbox bwrap by default) or on a running `kgym serve`
(`server_url`, default `KGYM_SERVER_URL`; token `KGYM_SERVE_TOKEN`).

Importing this module registers the environment (idempotently). SkyRL's trainer looks environments up in
the process that builds them, so import it where SkyRL users register their own environments: inside
the Ray entrypoint task of the training script, before `BasePPOExp(cfg).run()`::

    @ray.remote(num_cpus=1)
    def skyrl_entrypoint(cfg):
        import gym.integrations.skyrl  # registers "kernel-gym"
        BasePPOExp(cfg).run()

The dataset (`write_dataset("l1", "train.parquet")`) has SkyRL's row format: `prompt` (a chat list),
`env_class` "kernel-gym", and the task in `extra_info.task_id`; SkyRL hands every column but the prompt
and env_class to the environment as `extras`. Settings come from SkyRL's `environment.skyrl_gym.kernel-gym`
config (`KernelGymEnvConfig`: server_url, token, max_attempts, sandbox, reward, returns, discount, timeout_s). Without a
`max_attempts` there, an episode gets `generator.max_turns` attempts (SkyRL passes it as `extras["max_turns"]`).

Each environment (SkyRL builds one per trajectory) has its own episode, a session of its own on a served
gym, which `close()` ends; in-process grades share one executor per sandbox (`close_executors()`). As in
SkyRL's own environments the last step (done) sends no observation: its message is `metadata["message"]`.
A served gym's own `--attempts` also caps an episode. Stepping past `done` raises `EpisodeOver` (SkyRL's
generator never does).

`reward` takes a preset's name (`reward: kernrl`; gym.harness.reward). A step's reward stays its turn's
reward (SkyRL's trainer discounts per-step rewards with its own gamma); `returns` (best, last, discounted,
kevin) and `discount` make the `episode_return` metric and `metadata["episode_return"]` /
`metadata["turn_returns"]` (each turn's G_t = sum_{k>=t} gamma^(k-t) r_k, Kevin-32B's per-turn credit).

Masking: skyrl-gym's step output carries a float reward and no way to drop a sample, so a step whose grade was a
masked infra_error (the gym's failure, not the submission's) earns `RewardConfig.infra` (never more than a wrong
answer) and says `metadata["masked"] = True`; the `masked` metric (1.0 when any step was) lets a run filter it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gym.extras import require

require("skyrl", "gym.integrations.skyrl")

import skyrl_gym  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # noqa: E402

from gym.errors import EpisodeOver  # noqa: E402
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config  # noqa: E402
from gym.integrations.episodes import ChatMessage, EpisodeSource, KernelEpisode, Turn, close_executors, resolve_server_url, shared_executor, suite_prompts  # noqa: E402, F401  (close_executors: re-exported)
from gym.sandbox import DEFAULT_SANDBOX  # noqa: E402

if TYPE_CHECKING:
    pass

# The name the environment is registered under, and the `env_class` of the dataset's rows.
ENV_ID = "kernel-gym"
# The role SkyRL's generator appends environment observations as.
OBSERVATION_ROLE = "user"
# Attempts per episode when neither the env config nor SkyRL's extras say.
DEFAULT_MAX_ATTEMPTS = 3

# A Hermes/Qwen-style tool call written in the text: <tool_call>{"name": ..., "arguments": {...}}</tool_call>.
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


class KernelGymEnvConfig(BaseModel):
    """The environment's settings: SkyRL's `environment.skyrl_gym.kernel-gym` config (`env_config`)."""

    model_config = ConfigDict(extra="forbid")

    server_url: str | None = Field(default=None, description="A running `kgym serve` to grade on; None: KGYM_SERVER_URL, else grade in this process.")
    token: str | None = Field(default=None, description="The served gym's bearer token; None: KGYM_SERVE_TOKEN.")
    max_attempts: int | None = Field(default=None, ge=1, description="Attempts per episode; None: SkyRL's generator.max_turns (extras), else 3.")
    sandbox: str = Field(default=DEFAULT_SANDBOX, description='Sandbox of in-process grades: "bwrap" (default), "docker" or "process" (unsafe).')
    reward: RewardConfig | None = Field(
        default=None, description='The gym\'s reward settings or a preset\'s name ("kernrl", "kernelbench-fast-1.5", ...); None: the defaults (as `kgym run`).'
    )
    returns: ReturnConfig | None = Field(
        default=None,
        description='How the episode\'s turn rewards make its `episode_return` metric: "best" (None: the default), "last", "discounted", "kevin" (gamma 0.4).',
    )
    discount: float | None = Field(default=None, ge=0, le=1, description="gamma of the discounted return; given alone, the return is the discounted sum.")
    timeout_s: float = Field(default=900.0, gt=0, description="HTTP timeout of one request to a served gym.")
    dsl: Literal["triton", "helion"] = Field(
        default="triton", description='The kernel language of the task\'s own prompt when a row brings none ("triton" or "helion").'
    )


def _plain(value: Any) -> Any:
    """A config value as plain dicts and lists (an omegaconf DictConfig, a dataclass, a mapping)."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, DictConfig | ListConfig):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - omegaconf comes with skyrl-gym
        pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


def env_settings(env_config: Any) -> KernelGymEnvConfig:
    """`env_config` (None, a dict, an omegaconf DictConfig, a dataclass or a KernelGymEnvConfig) validated."""
    if isinstance(env_config, KernelGymEnvConfig):
        return env_config
    plain = _plain(env_config) if env_config is not None else {}
    return KernelGymEnvConfig.model_validate(plain or {})


def task_id_of(extras: Mapping[str, Any]) -> str:
    """The task of a dataset row's extras: `extra_info.task_id` (what `write_dataset` writes), else `task_id`."""
    info = extras.get("extra_info")
    for candidate in ((info or {}).get("task_id") if isinstance(info, Mapping) else None, extras.get("task_id")):
        if isinstance(candidate, str) and candidate:
            return candidate
    raise ValueError(f'the {ENV_ID} environment needs the task id in extras["extra_info"]["task_id"] (got keys {sorted(extras)})')


def tool_calls_in_text(text: str) -> list[dict[str, Any]]:
    """The `<tool_call>{json}</tool_call>` blocks of a reply as OpenAI-format tool calls (unparsable ones skipped)."""
    calls: list[dict[str, Any]] = []
    for body in _TOOL_CALL.findall(text or ""):
        try:
            call = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(call, dict):
            calls.append({"type": "function", "function": {"name": call.get("name"), "arguments": call.get("arguments", call.get("parameters"))}})
    return calls


# ---------------------------------------------------------------- the environment


class KernelGymEnv(BaseTextEnv):
    """One kernel task's multi-turn episode as a skyrl-gym text environment.

    Built by `skyrl_gym.make("kernel-gym", env_config=..., extras=row_extras)`; `episodes` (an
    `EpisodeSource`, e.g. with a custom grader) replaces what `env_config` would build."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None, episodes: EpisodeSource | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        self.settings = env_settings(env_config)
        self.task_id = task_id_of(extras)
        if episodes is None:
            attempts = self.settings.max_attempts or int(extras.get("max_turns") or DEFAULT_MAX_ATTEMPTS)
            server_url = resolve_server_url(self.settings.server_url)
            episodes = EpisodeSource(
                server_url=server_url,
                token=self.settings.token,
                max_attempts=attempts,
                sandbox=self.settings.sandbox,
                reward=self.settings.reward,
                returns=as_return_config(self.settings.returns, self.settings.discount),
                executor=shared_executor(self.settings.sandbox) if server_url is None else None,
                timeout_s=self.settings.timeout_s,
            )
        self.episodes = episodes
        self.max_turns = episodes.max_attempts
        self.episode: KernelEpisode | None = None
        self.last_turn: Turn | None = None

    def init(self, prompt: list[dict[str, Any]] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Open a fresh episode on the task; the first prompt is the row's (or, when empty, the task's own)."""
        self._close_episode()
        self.turns = 0
        self.last_turn = None
        self.episode = self.episodes.open(self.task_id)
        if not prompt:
            from gym.tasks.loader import find_task
            from gym.tasks.prompt import render_prompt

            prompt = [{"role": "user", "content": render_prompt(find_task(self.task_id), dsl=self.settings.dsl)}]
        return list(prompt), {"task_id": self.task_id, "max_attempts": self.max_turns}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Grade the code in the model's reply; observations hold the grade's feedback while the episode goes on."""
        if self.episode is None:
            self.episode = self.episodes.open(self.task_id)
        if self.episode.done:
            raise EpisodeOver(f"the {ENV_ID} episode on {self.task_id} is over after {self.episode.attempts} attempt(s); call init() for a new one")
        self.turns += 1
        turn = self.last_turn = self.episode.respond(action, tool_calls_in_text(action))
        grade = turn.grade
        metadata: dict[str, Any] = {
            "task_id": self.task_id,
            "attempt": turn.attempt,
            "attempts_left": max(0, self.max_turns - turn.attempt),
            "status": turn.status.value if turn.status is not None else None,
            "passed": self.episode.passed,
            "speedup_vs_eager": grade.speedup_vs_eager if grade is not None else None,
            "message": turn.message,
            "grade": grade.model_dump(mode="json") if grade is not None else None,
            "episode_return": self.episode.episode_return,
            "turn_returns": self.episode.turn_returns,
            "masked": turn.masked,
        }
        # SkyRL's own environments send no observation on the last turn: nothing more is generated after it.
        observations = [] if turn.done else [{"role": OBSERVATION_ROLE, "content": turn.message}]
        return BaseTextEnvStepOutput(observations=observations, reward=turn.reward, done=turn.done, metadata=metadata, postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """Episode metrics SkyRL averages over episodes: attempts used, passed (0/1), best reward, the episode's return."""
        episode = self.episode
        if episode is None:
            return {}
        return {
            "attempts": episode.attempts,
            "passed": float(episode.passed),
            "best_reward": episode.best_reward,
            "episode_return": episode.episode_return,
            "masked": float(episode.masked),
        }

    def close(self) -> None:
        """Close the episode (a served gym's session); the shared executor stays for the other environments."""
        self._close_episode()

    def _close_episode(self) -> None:
        episode, self.episode = self.episode, None
        if episode is not None:
            episode.close()


def register_env() -> str:
    """Register `KernelGymEnv` as "kernel-gym" in skyrl_gym's registry, once; return the id."""
    if ENV_ID not in skyrl_gym.registry:
        skyrl_gym.register(id=ENV_ID, entry_point=f"{__name__}:KernelGymEnv")
    return ENV_ID


register_env()


# ---------------------------------------------------------------- a suite as SkyRL's dataset


class RowInfo(BaseModel):
    """A row's `extra_info`: SkyRL passes it to the environment in `extras`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description='The task the environment opens, e.g. "l1/vector_add".')
    suite: str = Field(description='The task\'s suite, e.g. "l1".')
    title: str = Field(description="The task's one-line title.")
    index: int = Field(description="The row's position in the dataset.")
    task_split: str = Field(default="train", description="The task's stable split in the gym: train, val or test.")
    metadata: dict[str, object] = Field(default_factory=dict, description="The task's metadata for curricula (gym.schema.task_metadata.TaskMetadata).")


class DatasetRow(BaseModel):
    """One row of a SkyRL prompt dataset (`data.train_data`): the prompt, the env class and the extras."""

    model_config = ConfigDict(extra="forbid")

    data_source: str = Field(default=ENV_ID, description="Where the row comes from (SkyRL logs metrics per data source).")
    prompt: list[ChatMessage] = Field(description="The chat the model starts from.")
    env_class: str = Field(default=ENV_ID, description="The environment SkyRL builds for the row.")
    extra_info: RowInfo = Field(description="What the environment needs of the row: the task id (SkyRL hands it over in `extras`).")


def dataset_rows(
    suite: str, task_ids: list[str] | None = None, system_prompt: str | None = None, task_split: str | None = None, dsl: str = "triton"
) -> list[DatasetRow]:
    """A suite's tasks (or just `task_ids`; only the gym's `task_split` train / val / test when given) as SkyRL
    dataset rows, sorted by task id, each prompt asking for kernels in `dsl` ("triton" or "helion")."""
    rows = []
    for index, task in enumerate(suite_prompts(suite, task_ids, task_split, dsl)):
        messages = [ChatMessage(role="system", content=system_prompt)] if system_prompt else []
        messages.append(ChatMessage(role="user", content=task.prompt))
        rows.append(
            DatasetRow(
                prompt=messages,
                extra_info=RowInfo(task_id=task.task_id, suite=task.suite, title=task.title, index=index, task_split=task.split, metadata=task.metadata),
            )
        )
    return rows


def write_dataset(suite: str, path: str | Path, task_ids: list[str] | None = None, system_prompt: str | None = None, task_split: str | None = None) -> Path:
    """Write `dataset_rows(...)` as a parquet file SkyRL's trainer reads (`data.train_data=['<path>']`); return the path."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as error:  # pragma: no cover - SkyRL's trainer (datasets) brings pyarrow
        raise ImportError("write_dataset needs pyarrow (pip install pyarrow; SkyRL's trainer installs it)") from error
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = [row.model_dump(mode="json") for row in dataset_rows(suite, task_ids, system_prompt, task_split)]
    pq.write_table(pa.Table.from_pylist(rows), target)
    return target
