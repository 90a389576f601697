"""What the RL-framework adapters share: the served gym's token, the code in a model's turn, a suite as
prompts, and one multi-turn kernel episode graded in this process or by a running `kgym serve`.

    episodes = EpisodeSource(server_url=None, max_attempts=3)   # or server_url="http://host:8000"
    episode = episodes.open("l1/vector_add")
    turn = episode.respond(model_text)        # grades the code in the text (or says none was found)
    turn.message, turn.reward, turn.done

A turn whose grade is a masked infra_error (`Turn.masked`: the submission could not have caused it,
`gym.harness.reward.is_masked`) is a sample to drop, not to reward: each adapter drops or marks it with its
framework's own mechanism (docs/how/training-signal.md, "Fail closed"); its `reward` is `RewardConfig.infra`,
never more than a wrong answer, for anything that cannot drop it.

The reward is the gym's own (`gym.harness.reward.reward_for`), computed from the grade wherever it ran,
so a verifiers rubric, a verl reward and a SkyRL step agree with `kgym run` for the same grade. `reward=`
takes a RewardConfig or a preset's name ("kernrl", "kernelbench-fast-1.5", ...), and `returns=` how the
turns' rewards make the episode's return (`episode.episode_return`): "best" (the default), "last",
"discounted", or "kevin" (discounted, gamma 0.4), a ReturnConfig, or `discount=` alone (gym.harness.reward).
"""

from __future__ import annotations

import atexit
import json
import re
import threading
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from gym import settings
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, as_reward_config, episode_return, is_masked, reward_for, turn_returns
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.episode import MAX_CODE_BYTES, Action, Observation
from gym.schema.result import GradeResult, Status
from gym.serve.auth import serve_token

if TYPE_CHECKING:
    from gym.execution.executor import Executor
    from gym.harness.env import Grader

# The variable the adapters read a served gym's address from when none is given.
SERVER_URL_VARIABLE = "KGYM_SERVER_URL"

# A fenced block: ```python ... ``` (any info string, or none).
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)\n?[ \t]*```", re.DOTALL)

NO_CODE_MESSAGE = (
    "No submission found in your reply. Put the whole Python file (defining kernel(...) that launches "
    '@triton.jit kernels) in one ```python fenced block, or call submit_kernel with {"code": ...}.'
)


def resolve_server_url(url: str | None = None) -> str | None:
    """The served gym's address: `url` when given, else `KGYM_SERVER_URL`, else None (grade in this process)."""
    return url or settings.server_url()


# ---------------------------------------------------------------- code in a model's turn


def _code_in_call(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if isinstance(arguments, dict) and isinstance(arguments.get("code"), str):
        return arguments["code"]
    return None


def code_from_tool_calls(tool_calls: Any) -> str | None:
    """The `code` argument of the last submit_kernel-style tool call (OpenAI message format, dicts or objects)."""
    for call in reversed(list(tool_calls or [])):
        function = call.get("function") if isinstance(call, dict) else getattr(call, "function", None)
        arguments = function.get("arguments") if isinstance(function, dict) else getattr(function, "arguments", None)
        code = _code_in_call(arguments)
        if code is not None:
            return code.strip() or None
    return None


def code_from_text(text: str) -> str | None:
    """The submission in a model's reply: the last fenced block tagged python (else the last fenced block)
    that defines `kernel`; else the whole reply when it is Python defining `kernel`; None when there is none."""
    blocks = [(tag.lower(), body.strip()) for tag, body in _FENCE.findall(text or "")]
    for wanted in (("python", "py", "python3"), None):
        for tag, body in reversed(blocks):
            if (wanted is None or tag in wanted) and "def kernel" in body:
                return body
    stripped = (text or "").strip()
    if "def kernel" in stripped and not blocks:
        try:
            compile(stripped, "<reply>", "exec")
        except (SyntaxError, ValueError):
            return None
        return stripped
    return None


def code_from_turn(text: str, tool_calls: Any = None) -> str | None:
    """The submission in one model turn: a tool call's `code` wins over a fenced block in the text."""
    return code_from_tool_calls(tool_calls) or code_from_text(text)


# ---------------------------------------------------------------- a suite as prompts


class ChatMessage(BaseModel):
    """One message of a dataset row's prompt (OpenAI chat format), as verl and SkyRL read it."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description='"system" or "user".')
    content: str = Field(description="The message's text.")


class TaskPrompt(BaseModel):
    """One row of an RL dataset built from a suite."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description='The task, e.g. "l1/softmax"; adapters carry it in their row metadata.')
    suite: str = Field(description='The task\'s suite, e.g. "l1".')
    title: str = Field(description="The task's one-line title.")
    prompt: str = Field(description="The full prompt an agent works from (`kgym show`): reference, signature, shapes, contract.")
    split: str = Field(default="train", description="The task's stable split: train, val or test (README, Splits).")
    metadata: dict[str, object] = Field(default_factory=dict, description="The task's metadata (gym.schema.task_metadata.TaskMetadata, as a dict).")


def suite_prompts(suite: str, task_ids: list[str] | None = None, task_split: str | None = None, dsl: str = "triton") -> list[TaskPrompt]:
    """The prompts of a suite's tasks (or of just `task_ids`; only those of `task_split`, train / val / test,
    when given), sorted by id, each asking for kernels in `dsl` ("triton" or "helion"); ValueError when none match."""
    from gym.schema.result import DSLS
    from gym.tasks.loader import discover
    from gym.tasks.metadata import task_metadata
    from gym.tasks.prompt import render_prompt
    from gym.tasks.splits import SPLITS

    if task_split is not None and task_split not in SPLITS:
        raise ValueError(f"task_split must be one of {', '.join(SPLITS)}, not {task_split!r}")
    if dsl not in DSLS:
        raise ValueError(f"dsl must be one of {', '.join(DSLS)}, not {dsl!r}")
    tasks = sorted(discover(suite=suite, split=task_split).tasks, key=lambda task: task.id)
    if task_ids is not None:
        wanted = set(task_ids)
        tasks = [task for task in tasks if task.id in wanted]
        unknown = wanted - {task.id for task in tasks}
        if unknown:
            raise ValueError(f"no task {', '.join(sorted(unknown))} in suite {suite!r}" + (f" and split {task_split}" if task_split else ""))
    if not tasks:
        raise ValueError(f"no tasks in suite {suite!r}" + (f" and split {task_split}" if task_split else ""))
    return [
        TaskPrompt(
            task_id=task.id,
            suite=task.suite,
            title=task.spec.title,
            prompt=render_prompt(task, dsl=dsl),
            split=str(task.split),
            metadata=task_metadata(task).model_dump(),
        )
        for task in tasks
    ]


# ---------------------------------------------------------------- executors shared by a process

# RL frameworks build one environment per trajectory, often hundreds in one process: in-process grades
# share one local executor per sandbox, so its device pool bounds the grades running at once (one per GPU,
# the cores on CPU) and its warm pool serves them all.
_executors: dict[str, Executor] = {}
_executors_lock = threading.Lock()


def shared_executor(sandbox: str = DEFAULT_SANDBOX) -> Executor:
    """The process's local executor for `sandbox`, made on first use."""
    with _executors_lock:
        executor = _executors.get(sandbox)
        if executor is None:
            from gym.execution.executor import GradeOptions, make_executor

            executor = _executors[sandbox] = make_executor("local", options=GradeOptions(sandbox=sandbox))
        return executor


def close_executors() -> None:
    """Stop the shared executors (and their warm workers); the next in-process grade makes a fresh one. Runs at exit."""
    with _executors_lock:
        executors = list(_executors.values())
        _executors.clear()
    for executor in executors:
        executor.close()


atexit.register(close_executors)


# ---------------------------------------------------------------- one episode


class Turn(BaseModel):
    """What the environment answers one model turn."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="The environment's reply to the model: the grade and its feedback, or why nothing was graded.")
    reward: float = Field(description="The gym's reward for this turn's grade (`RewardConfig.failed` when no code was found).")
    done: bool = Field(description="True once a submission passed or the attempts are spent.")
    status: Status | None = Field(default=None, description="The grade's status; None when the turn held no code.")
    attempt: int = Field(description="Attempts used so far, this one included (a turn without code counts).")
    grade: GradeResult | None = Field(default=None, description="The whole grade; None when the turn held no code.")
    masked: bool = Field(
        default=False,
        description=(
            "True when the grade is a masked infra_error (the submission could not have caused it): drop the sample rather "
            "than train on `reward` (which is RewardConfig.infra, never more than a wrong answer)."
        ),
    )


class GradedEpisode(Protocol):
    """`gym.harness.env.Env` (in process) and `gym.serve.client.GymClient` (a served gym) both fit."""

    def step(self, code: str | Action, /) -> Observation: ...


def turn_message(observation: Observation) -> str:
    """A grade as the environment's reply: status, attempts left, speedups, feedback, what to do next."""
    from gym.harness.agents.openai_agent import tool_result

    return tool_result(observation).replace("call submit_kernel again", "submit it again")


class KernelEpisode:
    """One task's multi-turn episode: each model turn's code is graded; it ends on a pass or when attempts run out."""

    def __init__(
        self, task_id: str, graded: GradedEpisode, max_attempts: int, reward: RewardConfig, close: Any = None, returns: ReturnConfig | None = None
    ) -> None:
        self.task_id = task_id
        self.max_attempts = max_attempts
        self.reward_config = reward
        self.return_config = returns or ReturnConfig()
        self.attempts = 0
        self.rewards: list[float] = []
        # Per turn: whether its grade was a masked infra_error (a sample to drop).
        self.masks: list[bool] = []
        self.passed = False
        self.last: Turn | None = None
        self._graded = graded
        self._close = close

    @property
    def done(self) -> bool:
        return self.passed or self.attempts >= self.max_attempts

    @property
    def best_reward(self) -> float:
        return max(self.rewards, default=self.reward_config.failed)

    @property
    def masked(self) -> bool:
        """True when any graded turn was a masked infra_error: the episode met a failure of the gym's, so its
        return does not measure the policy, and an RL trainer should drop it (each adapter says how)."""
        return any(self.masks)

    @property
    def episode_return(self) -> float:
        """The episode's return under its ReturnConfig (best turn's by default; `RewardConfig.failed` before any turn)."""
        return episode_return(self.rewards, self.return_config, empty=self.reward_config.failed)

    @property
    def turn_returns(self) -> list[float]:
        """Each turn's discounted return G_t = sum_{k >= t} discount^(k - t) r_k, with the ReturnConfig's discount."""
        return turn_returns(self.rewards, self.return_config.discount)

    def respond(self, text: str, tool_calls: Any = None) -> Turn:
        """Grade the code in one model turn (ValueError when the episode is over)."""
        if self.done:
            raise ValueError(f"the episode on {self.task_id} is over ({self.attempts} attempt(s))")
        self.attempts += 1
        code = code_from_turn(text, tool_calls)
        if code is None or len(code.encode("utf-8")) > MAX_CODE_BYTES:
            why = NO_CODE_MESSAGE if code is None else f"The submission is larger than the {MAX_CODE_BYTES} bytes allowed."
            left = self.max_attempts - self.attempts
            self.rewards.append(self.reward_config.failed)
            self.masks.append(False)
            self.last = Turn(message=f"{why} ({left} attempt(s) left)", reward=self.reward_config.failed, done=self.done, attempt=self.attempts)
            return self.last
        observation = self._graded.step(Action(code=code))
        grade = observation.grade
        reward = reward_for(grade, self.reward_config) if grade is not None else observation.reward
        self.passed = self.passed or (grade is not None and grade.status == Status.passed)
        self.rewards.append(reward)
        masked = is_masked(grade) if grade is not None else observation.masked
        self.masks.append(masked)
        shown = observation.model_copy(update={"attempt": self.attempts, "attempts_left": max(0, self.max_attempts - self.attempts), "done": self.done})
        self.last = Turn(
            message=turn_message(shown),
            reward=reward,
            done=self.done,
            status=grade.status if grade is not None else None,
            attempt=self.attempts,
            grade=grade,
            masked=masked,
        )
        return self.last

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None


class EpisodeSource:
    """Opens kernel episodes graded in this process (the process's shared local executor, or the `executor` or
    `grader` given) or by the `kgym serve` at `server_url` (default `KGYM_SERVER_URL`; token from
    `KGYM_SERVE_TOKEN`). Thread-safe."""

    def __init__(
        self,
        *,
        server_url: str | None = None,
        token: str | None = None,
        max_attempts: int = 3,
        sandbox: str = DEFAULT_SANDBOX,
        reward: RewardConfig | str | None = None,
        executor: Executor | None = None,
        grader: Grader | None = None,
        timeout_s: float = 900.0,
        returns: ReturnConfig | str | None = None,
        discount: float | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.server_url = resolve_server_url(server_url)
        self.token = serve_token(token)
        self.max_attempts = max_attempts
        self.sandbox = sandbox
        self.reward = as_reward_config(reward)
        self.returns = as_return_config(returns, discount)
        self.timeout_s = timeout_s
        self._grader = grader
        # None: the process's shared executor (`shared_executor`); one given stays the caller's to close.
        self._executor = executor
        self._lock = threading.Lock()

    def executor(self) -> Executor:
        """The in-process executor: the one given, else the process's shared one for this sandbox."""
        with self._lock:
            return self._executor or shared_executor(self.sandbox)

    def open(self, task_id: str) -> KernelEpisode:
        """A fresh episode on `task_id` (TaskLoadError, or GymClientError from a server, when it is unknown)."""
        if self.server_url is not None:
            from gym.serve.client import GymClient

            client = GymClient(self.server_url, token=self.token, timeout_s=self.timeout_s)
            try:
                client.reset(task_id=task_id)
            except BaseException:
                client.close()
                raise

            def close() -> None:
                try:
                    client.close_session()
                finally:
                    client.close()

            return KernelEpisode(task_id, client, self.max_attempts, self.reward, close, self.returns)
        from gym.harness.env import Env

        if self._grader is not None:
            env = Env(max_attempts=self.max_attempts, sandbox=self.sandbox, reward=self.reward, grader=self._grader)
        else:
            env = Env(max_attempts=self.max_attempts, sandbox=self.sandbox, reward=self.reward, executor=self.executor())
        env.reset(task_id=task_id)
        return KernelEpisode(task_id, _EnvSteps(env), self.max_attempts, self.reward, env.close, self.returns)

    def grade_once(self, task_id: str, text: str, tool_calls: Any = None) -> Turn:
        """A single-turn grade of the code in `text` (verl's reward function)."""
        episode = self.open(task_id)
        try:
            return episode.respond(text, tool_calls)
        finally:
            episode.close()

    def close(self) -> None:
        """Nothing to release: episodes close themselves, and executors are the caller's or the process's
        (`close_executors`). Kept so adapters can close what they made without knowing which it is."""


class _EnvSteps:
    """`Env.step` takes an Action; GymClient.step takes code or an Action: one shape for KernelEpisode."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def step(self, code: str | Action, /) -> Observation:
        return self.env.step(code if isinstance(code, Action) else Action(code=code))
