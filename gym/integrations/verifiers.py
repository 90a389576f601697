"""Kernel Gym as a multi-turn `verifiers` environment (prime-intellect's verifiers, the 0.4 `verifiers.v1` stack).

    import asyncio
    import verifiers.v1 as vf
    from gym.integrations.verifiers import evaluate, load_environment

    env = load_environment(suite="l1", attempts=3, task_ids=["l1/vector_add", "l1/silu"])  # server_url="http://host:8000" grades remotely
    client = vf.EvalClientConfig(base_url="http://127.0.0.1:8001/v1", api_key_var="OPENAI_API_KEY")
    episodes = asyncio.run(evaluate(env, model="my-model", client=client))
    for episode in episodes:
        trace = episode.traces[0]
        print(trace.task.data.id, trace.reward, trace.info["kgym"]["turns"])

What it is, in verifiers' terms:

- the taskset (`KernelTaskset`) is the suite's task prompts (`kgym show` text), one `KernelTask` per task id;
- the env (`KernelEnv`) is the multi-turn loop: it holds the agent's rollout open with `agent.interaction(task)`,
  grades the code in each model turn (the last ```python block of the reply, or a `submit_kernel` tool call's
  `code`) and answers with the grade feedback, as a user message or as the tool call's result; the episode stops
  on a pass or when `attempts` turns have been graded (a turn without code counts as an attempt);
- the harness (`KernelHarness`) is an in-process chat loop: each segment is exactly one chat completion through
  verifiers' interception endpoint (so traces, token counts, limits and training clients work as for any
  harness), offering the `submit_kernel` tool unless `submit_tool=False`;
- the rubric is the task's `kernel_reward`, the gym's own reward (`gym.harness.reward.reward_for` of each
  grade, carried by `gym.integrations.episodes.Turn.reward`).

The episode's reward is its BEST graded turn's reward (`episode_reward="best"`, the default), as the gym's own
`Env` keeps an episode's `best_reward` and `KernelEpisode.best_reward` is the max: the episode stops on a pass, so
a passing episode's reward is its pass's, and an earlier near miss is not wiped out by a later worse turn (a later
rejected turn still shows in the `last_reward` metric and in `trace.info["kgym"]`). `episode_reward="last"`
scores the final turn instead, `"discounted"` the discounted sum G_0 = sum_k discount^k r_k (`discount=`, default 1),
and `"kevin"` the same with discount 0.4 (Kevin-32B); `trace.info["kgym"]["turn_returns"]` holds every turn's
G_t = sum_{k>=t} discount^(k-t) r_k (gym.harness.reward.ReturnConfig). `reward=` takes a RewardConfig or a preset's
name ("kernrl", "kernelgym", "kernelbench-fast-1.5", ...). Metrics: `attempts`, `passed`, `best_reward`, `last_reward`,
`masked`.

Masking: a turn whose grade is a masked infra_error (the submission could not have caused it; `Turn.masked`)
makes the rollout untrainable with verifiers' own flag, `trace.agent.trainable = False` ("whether this trace's
tokens train the run's policy"), so the sample is dropped rather than rewarded; `KernelState.masked`, the
`masked` metric and `trace.info["kgym"]["masked"]` say so. Its reward stays the gym's (`infra`, never more
than a wrong answer) for evaluations, which read every trace.

Per-rollout state lives in the rollout's own state object (`trace.state`, a `KernelState`): the live
`KernelEpisode` and its `Turn`s (grades included), so concurrent rollouts never share an episode; the episode is
closed when the rollout ends. `trace.info["kgym"]` keeps a serializable summary (status and reward per turn).

Grading runs in this process (the local executor, `sandbox="bwrap"` by default) or against a running
`kgym serve` when `server_url` is given (or `KGYM_SERVER_URL` is set); its bearer token is `token=` or
`KGYM_SERVE_TOKEN`, and is never written into the env's config or traces.

verifiers resolves plugins by id as importable modules; this module registers itself as the id `kernel-gym`
(module `kernel_gym`) when imported, so `vf.load_environment(vf.resolve_env_config({"taskset": {"id":
"kernel-gym", "suite": "l1"}}))` and configs naming `kernel-gym` work in a process that imported it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr

from gym.extras import require

require("verifiers", "gym.integrations.verifiers", "verifiers.v1")

import openai  # noqa: E402  (verifiers depends on it)
import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.dialects.chat import message_to_wire  # noqa: E402
from verifiers.v1.errors import MODEL_TRANSPORT_ERROR_EXIT_CODE  # noqa: E402

from gym.harness.agents.openai_agent import SUBMIT_TOOL  # noqa: E402
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, as_reward_config, episode_return, turn_returns  # noqa: E402
from gym.integrations.episodes import EpisodeSource, KernelEpisode, Turn, code_from_tool_calls, suite_prompts  # noqa: E402
from gym.sandbox import DEFAULT_SANDBOX  # noqa: E402
from gym.schema.result import Status  # noqa: E402

__all__ = [
    "PLUGIN_ID",
    "STOP_OUT_OF_ATTEMPTS",
    "STOP_PASSED",
    "SYSTEM_PROMPT",
    "KernelEnv",
    "KernelEnvConfig",
    "KernelHarness",
    "KernelHarnessConfig",
    "KernelState",
    "KernelTask",
    "KernelTaskData",
    "KernelTaskset",
    "KernelTasksetConfig",
    "TurnRecord",
    "drop_from_training",
    "evaluate",
    "load_environment",
]

# The id verifiers resolves this module by (`--env.taskset.id kernel-gym`), and the module name it imports for it.
PLUGIN_ID = "kernel-gym"
PLUGIN_MODULE = "kernel_gym"
# verifiers imports a plugin id as a top-level module exporting its classes in `__all__`: be that module.
sys.modules.setdefault(PLUGIN_MODULE, sys.modules[__name__])

SYSTEM_PROMPT = """\
You are an expert GPU kernel engineer. Each task gives you a PyTorch reference operation (the spec), its \
signature, public shapes and dtypes, a closeness contract every output must satisfy, and the torch calls you may \
use for allocation and launch plumbing. Write a Triton implementation that satisfies the contract and runs as fast \
as possible.

Submit one complete Python file that defines `kernel(...)` with the reference's parameters and return structure \
and does the computation in @triton.jit kernels that it launches: put the whole file in one ```python fenced \
block (or pass it as `code` to the submit_kernel tool when it is offered). Each reply with code is graded in a \
sandbox on public and hidden shapes; the grade (status, speedup over PyTorch, feedback) comes back as the next \
message, and you can fix the kernel and submit again until it passes or your attempts run out. A reply without \
code uses an attempt too. Do not specialise to the public shapes, cache results between calls, mutate inputs or \
let torch compute ops do the work: the grader detects these and rejects the submission."""

NOT_GRADED = "Not graded: only the last submit_kernel call of a reply is graded."

# The trace's stop condition when an episode ends: on a pass, or with its attempts spent.
STOP_PASSED = "kernel_passed"
STOP_OUT_OF_ATTEMPTS = "attempts_exhausted"


# ---------------------------------------------------------------- the taskset


class KernelTaskData(vf.TaskData):
    """One kernel task as verifiers task data: `id` is the gym's task id ("l1/softmax"), `prompt` its `kgym show` text."""

    suite: str = Field(default="", description='The task\'s suite, e.g. "l1".')
    task_split: str = Field(default="train", description="The task's stable split in the gym: train, val or test.")
    metadata: dict[str, object] = Field(default_factory=dict, description="The task's metadata for curricula (gym.schema.task_metadata.TaskMetadata).")


class TurnRecord(BaseModel):
    """One graded model turn, as kept in `trace.info["kgym"]["turns"]`."""

    model_config = ConfigDict(extra="forbid")

    attempt: int = Field(description="The attempt number, 1-based (a turn without code counts).")
    status: Status | None = Field(description="The grade's status; None when the turn held no code.")
    reward: float = Field(description="The gym's reward for the turn (`reward_for` of its grade).")
    speedup_vs_eager: float | None = Field(default=None, description="The grade's speedup over eager PyTorch, when it passed and was timed.")
    masked: bool = Field(default=False, description="True when the grade was a masked infra_error (the gym's failure): the rollout is dropped from training.")


class KernelState(vf.State):
    """The rollout's own state: its live episode and graded turns (never shared between rollouts)."""

    turns: list[Turn] = Field(default_factory=list, description="Every graded turn of this rollout, grades included, in order.")
    reward: float = Field(default=0.0, description="The episode's reward so far: its return per `episode_reward` (best turn's, last turn's, or discounted).")
    masked: bool = Field(
        default=False,
        description="True once a turn's grade was a masked infra_error: the rollout is marked untrainable (trace.agent.trainable = False).",
    )
    _episode: KernelEpisode | None = PrivateAttr(default=None)

    @property
    def episode(self) -> KernelEpisode | None:
        """The live episode while the rollout runs (None before it opened and after it closed)."""
        return self._episode

    @property
    def passed(self) -> bool:
        return any(turn.status == Status.passed for turn in self.turns)


def _state(trace: vf.Trace) -> KernelState:
    state = trace.state
    if not isinstance(state, KernelState):
        raise TypeError(f"a kernel rollout's state is a KernelState, not {type(state).__name__}")
    return state


class KernelTask(vf.Task[KernelTaskData, KernelState]):
    """A kernel task; its rubric is the gym's reward, read from the rollout's state that `KernelEnv` filled."""

    @property
    def key(self) -> str:
        # The task id is durable and unique in a suite; the content hash would change with every prompt edit.
        return self.data.id or self.hash

    @vf.reward
    async def kernel_reward(self, trace: vf.Trace) -> float:
        """The gym's reward of the episode: its return per `episode_reward` (best graded turn's by default)."""
        return _state(trace).reward

    @vf.metric
    async def kernel_metrics(self, trace: vf.Trace) -> dict[str, float]:
        state = _state(trace)
        rewards = [turn.reward for turn in state.turns]
        return {
            "attempts": float(len(state.turns)),
            "passed": float(state.passed),
            "best_reward": max(rewards, default=state.reward),
            "last_reward": rewards[-1] if rewards else state.reward,
            "masked": float(state.masked),
        }


class KernelTasksetConfig(vf.TasksetConfig):
    """Which tasks load (`--env.taskset.suite`, `--env.taskset.task-ids`)."""

    id: str = Field(default=PLUGIN_ID, description="The taskset's plugin id (the gym's verifiers id).")
    suite: str = Field(default="l1", description='The suite whose tasks are the dataset, e.g. "l1" or "kb/l1".')
    task_ids: list[str] | None = Field(default=None, description="Only these tasks of the suite (default: all of them).")
    task_split: Literal["train", "val", "test"] | None = Field(default=None, description="Only the tasks of this split of the gym's (default: every split).")
    dsl: Literal["triton", "helion"] = Field(default="triton", description='The kernel language the prompts ask for: "triton" or "helion".')


class KernelTaskset(vf.Taskset[KernelTask, KernelTasksetConfig]):
    """The suite's task prompts, sorted by task id."""

    def load(self) -> Iterable[KernelTask]:
        for prompt in suite_prompts(self.config.suite, self.config.task_ids, self.config.task_split, self.config.dsl):
            data = KernelTaskData(
                id=prompt.task_id,
                name=prompt.task_id,
                description=prompt.title,
                suite=prompt.suite,
                task_split=prompt.split,
                metadata=prompt.metadata,
                prompt=prompt.prompt,
                system_prompt=SYSTEM_PROMPT,
            )
            yield KernelTask(data, self.config.task)


# ---------------------------------------------------------------- the harness


class KernelHarnessConfig(vf.HarnessConfig):
    id: str = Field(default=PLUGIN_ID, description="The harness's plugin id (the gym's verifiers id).")
    submit_tool: bool = Field(default=True, description="Offer the submit_kernel tool (a fenced ```python block is graded either way).")


class KernelHarness(vf.Harness[KernelHarnessConfig]):
    """One chat completion per segment, made in this process through the rollout's interception endpoint."""

    APPENDS_SYSTEM_PROMPT: ClassVar[bool] = True
    SUPPORTS_RESUME: ClassVar[bool] = True
    EXECUTES_CODE: ClassVar[bool] = False
    NEEDS_CONTAINER: ClassVar[bool] = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        system, prompt = self.resolve_prompt(data)
        messages: list[Any] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(message) for message in prompt or []]
        options: dict[str, Any] = {"tools": [SUBMIT_TOOL]} if self.config.submit_tool else {}
        # The interception owns retries, the model name and sampling; it records the call on the trace.
        async with openai.AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            try:
                await client.chat.completions.create(model=ctx.model, messages=messages, **options)
            except openai.APIConnectionError as error:
                return vf.ProgramResult(exit_code=MODEL_TRANSPORT_ERROR_EXIT_CODE, stdout="", stderr=f"model connection failed: {error}")
            except openai.APIError as error:
                return vf.ProgramResult(exit_code=1, stdout="", stderr=f"model call failed: {error}")
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


# ---------------------------------------------------------------- the environment


class KernelEnvConfig(vf.EnvConfig):
    """The env's knobs (`--env.attempts`, `--env.server-url`, ...); the one seat is `agent`."""

    taskset: KernelTasksetConfig = Field(default=KernelTasksetConfig(), description="Which of the suite's tasks are the dataset.")
    agent: vf.AgentConfig = Field(
        default=vf.AgentConfig(runtime=vf.SubprocessConfig()),
        description="The one seat: the model's agent, run in a local subprocess runtime (no remote sandbox).",
    )
    attempts: int = Field(default=3, ge=1, description="Graded turns per episode (a turn without code counts); it stops earlier on a pass.")
    server_url: str | None = Field(default=None, description="A running `kgym serve` to grade on (default KGYM_SERVER_URL; unset: grade in this process).")
    token: SecretStr | None = Field(default=None, exclude=True, description="The served gym's bearer token (default KGYM_SERVE_TOKEN); never serialized.")
    sandbox: str = Field(default=DEFAULT_SANDBOX, description="The sandbox of in-process grades: bwrap, docker or process.")
    reward: RewardConfig = Field(
        default_factory=RewardConfig,
        description='The gym\'s reward function of a grade: a RewardConfig or a preset\'s name ("kernrl", "kernelgym", "kernelbench-fast-1.5", ...).',
    )
    episode_reward: Literal["best", "last", "discounted", "kevin"] = Field(
        default="best",
        description="The episode's reward: its best graded turn's, its last turn's, the discounted sum of its turns' rewards, or kevin (discounted, discount 0.4).",
    )
    discount: float | None = Field(default=None, ge=0, le=1, description="gamma of the discounted return (discounted: default 1; kevin: default 0.4).")

    @property
    def returns(self) -> ReturnConfig:
        """The episode's return as a ReturnConfig (`episode_reward` and `discount`)."""
        return as_return_config(self.episode_reward, self.discount)


def _reply_to(message: vf.AssistantMessage, turn: Turn) -> list[vf.Message]:
    """The env's answer to one model turn: the grade as the tool result of the graded submit_kernel call (other
    calls of the reply are answered as not graded), else as a user message."""
    calls = message.tool_calls or []
    if not calls:
        return [vf.UserMessage(content=turn.message)]
    graded = next((call.id for call in reversed(calls) if code_from_tool_calls([_wire_call(call)]) is not None), calls[-1].id)
    return [vf.ToolMessage(tool_call_id=call.id, name=call.name, content=turn.message if call.id == graded else NOT_GRADED) for call in calls]


def _wire_call(call: vf.ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


class KernelEnv(vf.Env[KernelEnvConfig]):
    """The multi-turn kernel episode: the model submits, the gym grades and answers, until a pass or the attempts run out."""

    def __init__(self, config: KernelEnvConfig, episodes: EpisodeSource | None = None) -> None:
        super().__init__(config)
        # A source handed in stays the caller's to close; one made here is closed by `stop()` (the end of `serving()`).
        self._episodes = episodes
        self._owns_episodes = episodes is None

    @property
    def episodes(self) -> EpisodeSource:
        """Where episodes are opened and graded (made on first use from the config)."""
        if self._episodes is None:
            config = self.config
            self._episodes = EpisodeSource(
                server_url=config.server_url,
                token=config.token.get_secret_value() if config.token is not None else None,
                max_attempts=config.attempts,
                sandbox=config.sandbox,
                reward=config.reward,
                returns=config.returns,
            )
        return self._episodes

    async def stop(self) -> None:
        if self._owns_episodes and self._episodes is not None:
            source, self._episodes = self._episodes, None
            await asyncio.to_thread(source.close)

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        if task.data.id is None:
            raise ValueError("a kernel task's data carries its task id in `id`")
        episodes = self.episodes
        async with agents.agent.interaction(task) as interaction:
            state = _state(interaction.trace)
            state.reward = self.config.reward.failed
            episode = await asyncio.to_thread(episodes.open, task.data.id)
            state._episode = episode
            try:
                segment = await interaction.turn()  # the prompted task speaks first: the model's first reply
                while not segment.terminated:
                    reply = next((m for m in reversed(segment.messages) if isinstance(m, vf.AssistantMessage)), None)
                    if reply is None:
                        break
                    turn = await asyncio.to_thread(episode.respond, reply.content or "", [_wire_call(call) for call in reply.tool_calls or []])
                    self._record(interaction.trace, state, turn)
                    if turn.done:
                        # A stopped rollout is complete: it is still finalized and scored when the interaction closes.
                        interaction.trace.stop(STOP_PASSED if state.passed else STOP_OUT_OF_ATTEMPTS)
                        break
                    segment = await interaction.turn(_reply_to(reply, turn))
            finally:
                # Synchronous, so a cancelled rollout still closes its episode (a served gym's session too).
                state._episode = None
                episode.close()

    def _record(self, trace: vf.Trace, state: KernelState, turn: Turn) -> None:
        state.turns.append(turn)
        rewards = [t.reward for t in state.turns]
        returns = self.config.returns
        state.reward = episode_return(rewards, returns)
        speedup = turn.grade.speedup_vs_eager if turn.grade is not None else None
        record = TurnRecord(attempt=turn.attempt, status=turn.status, reward=turn.reward, speedup_vs_eager=speedup, masked=turn.masked)
        if turn.masked:
            drop_from_training(trace, state)
        summary = trace.info.setdefault("kgym", {"task_id": trace.task.data.id, "turns": []})
        summary["turns"].append(record.model_dump(mode="json"))
        summary["passed"] = state.passed
        summary["masked"] = state.masked
        summary["turn_returns"] = turn_returns(rewards, returns.discount)


def drop_from_training(trace: vf.Trace, state: KernelState) -> None:
    """Mark a rollout whose grade was a masked infra_error as not training the policy: verifiers' own
    `trace.agent.trainable` flag (the trace keeps its reward for evaluation)."""
    state.masked = True
    if trace.agent is not None:
        trace.agent.trainable = False


# ---------------------------------------------------------------- entry points


def load_environment(
    suite: str = "l1",
    attempts: int = 3,
    server_url: str | None = None,
    *,
    task_ids: list[str] | None = None,
    sandbox: str = DEFAULT_SANDBOX,
    token: str | None = None,
    reward: RewardConfig | str | None = None,
    episode_reward: Literal["best", "last", "discounted", "kevin"] = "best",
    discount: float | None = None,
    submit_tool: bool = True,
    episodes: EpisodeSource | None = None,
    task_split: Literal["train", "val", "test"] | None = None,
    dsl: Literal["triton", "helion"] = "triton",
) -> KernelEnv:
    """The verifiers environment over `suite` (or just `task_ids`), `attempts` graded turns an episode, graded in
    this process (`sandbox`) or by the `kgym serve` at `server_url` (bearer `token`, default KGYM_SERVE_TOKEN).
    `episodes` hands in a ready EpisodeSource (e.g. one sharing an executor); it overrides the grading arguments.
    `reward` is a RewardConfig or a preset's name; `episode_reward` and `discount` make the episode's return."""
    config = KernelEnvConfig(
        taskset=KernelTasksetConfig(suite=suite, task_ids=task_ids, task_split=task_split, dsl=dsl),
        agent=vf.AgentConfig(runtime=vf.SubprocessConfig(), harness=KernelHarnessConfig(submit_tool=submit_tool)),
        attempts=attempts,
        server_url=server_url,
        token=SecretStr(token) if token else None,
        sandbox=sandbox,
        reward=as_reward_config(reward),
        episode_reward=episode_reward,
        discount=discount,
    )
    return KernelEnv(config, episodes=episodes)


async def evaluate(
    env: vf.Env,
    *,
    model: str,
    client: vf.EvalClientConfig | vf.TrainClientConfig,
    rollouts_per_task: int = 1,
    max_concurrent: int | None = None,
    sampling: vf.Sampling | None = None,
) -> list[vf.Episode]:
    """Run `rollouts_per_task` episodes of every task of `env`'s taskset against `model` at `client` (an
    OpenAI-compatible endpoint), `max_concurrent` at a time, inside `env.serving()`; the episodes in task order."""
    ctx = vf.ModelContext(model=model, client=client, sampling=sampling or vf.Sampling())
    semaphore = asyncio.Semaphore(max_concurrent) if max_concurrent else None
    async with env.serving():
        slots = [slot for task in env.taskset for slot in env.slots(task, rollouts_per_task)]
        return list(await asyncio.gather(*(env.run_slot(slot, ctx, semaphore) for slot in slots)))
