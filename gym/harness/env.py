"""`Env`: multi-turn kernel-writing episodes over the grader.

`reset` picks a task and returns its prompt; each `step` grades one submission
and returns the grade, agent-facing feedback, a reward and `done`. An episode
ends when a submission passes (unless `stop_on_pass=False`, to keep optimising)
or when the attempt budget is spent.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import threading
import uuid
from pathlib import Path

from gym.errors import EnvError
from gym.execution.executor import Executor, executor_grader
from gym.execution.local import local_grader
from gym.grading.grader import Grader
from gym.grading.options import GradeOptions
from gym.harness.reward import ReturnConfig, RewardConfig, as_return_config, as_reward_config, episode_return, is_masked, reward_for
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.episode import Action, GradeSummary, Observation, State
from gym.schema.ranking import best_graded, better  # noqa: F401  (best_graded: re-exported from its old home)
from gym.schema.result import DSLS, Dsl, GradeResult, Status
from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task
from gym.tasks.prompt import render_prompt
from gym.tasks.splits import SPLITS

DEFAULT_ATTEMPTS = 5


def pick_task(task_id: str | None, suite: str | None, seed: int | None, split: str | None = None) -> Task:
    """`task_id` (which must be of `split` when one is given), or a task drawn from `suite` and `split`."""
    if task_id is not None:
        task = find_task(task_id)
        if split is not None and task.split != split:
            raise EnvError(f"{task_id} is in the {task.split} split, not {split}")
        return task
    tasks = discover(suite=suite, split=split).tasks
    if not tasks:
        raise EnvError(f"no tasks found{f' in suite {suite!r}' if suite else ''}{f' in the {split} split' if split else ''}")
    return random.Random(seed).choice(sorted(tasks, key=lambda task: task.id))


class Env:
    """One episode at a time; thread-safe. Use one Env per concurrent episode."""

    def __init__(
        self,
        *,
        max_attempts: int = DEFAULT_ATTEMPTS,
        sandbox: str = DEFAULT_SANDBOX,
        reward: RewardConfig | str | None = None,
        returns: ReturnConfig | str | None = None,
        stop_on_pass: bool = True,
        grader: Grader | None = None,
        executor: Executor | None = None,
        split: str | None = None,
        options: GradeOptions | None = None,
        dsl: Dsl = "triton",
    ) -> None:
        """`grader` (tests inject fakes) wins over `executor` (e.g. `make_executor("ray")`: each step's
        grade runs where it places it), which wins over a `local` executor of the Env's own on this host.
        Every grade is asked for with `options` (default: `GradeOptions(sandbox=sandbox)`).
        `split` (train / val / test) confines every episode to that split's tasks. `reward` is a RewardConfig
        or a preset's name ("kernrl", "kernelbench-fast-1.5", ...; gym.harness.reward); `returns` how the turns'
        rewards make `state.episode_return` ("best", the default, "last", "discounted", "kevin", or a ReturnConfig).
        `dsl` ("triton" or "helion") is the kernel language each episode's prompt asks for (`reset` may choose another);
        the grader reads a submission's language from its source either way."""
        if max_attempts < 1:
            raise EnvError("max_attempts must be at least 1")
        if dsl not in DSLS:
            raise EnvError(f"dsl must be one of {', '.join(DSLS)}, not {dsl!r}")
        self.dsl: Dsl = dsl
        # The kernel language of the current episode's prompt.
        self.episode_dsl: Dsl = dsl
        if split is not None and split not in SPLITS:
            raise EnvError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        self.split = split
        self.max_attempts = max_attempts
        self.reward_config = as_reward_config(reward)
        self.return_config = as_return_config(returns)
        self.stop_on_pass = stop_on_pass
        self.options = options or GradeOptions(sandbox=sandbox)
        if grader is None:
            grader = executor_grader(executor, self.options) if executor is not None else local_grader(self.options)
        self.grader = grader
        self.task: Task | None = None
        # The full grade behind `state.best`.
        self.best_grade: GradeResult | None = None
        self._prompt = ""
        self._state = self._new_state(uuid.uuid4().hex, None)
        self._lock = threading.Lock()

    # ------------------------------------------------------------ episode

    def reset(
        self,
        task_id: str | None = None,
        seed: int | None = None,
        suite: str | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        dsl: Dsl | None = None,
    ) -> Observation:
        """Start an episode on `task_id` (or a task drawn from `suite` and `split`, reproducibly with `seed`);
        `episode_id` continues a recorded episode under its own id (a fresh one is drawn otherwise). An Env
        made with a split allows no other. `dsl`: the kernel language this episode's prompt asks for
        (default: the Env's)."""
        if self.split is not None and split is not None and split != self.split:
            raise EnvError(f"this environment serves the {self.split} split only, not {split}")
        if dsl is not None and dsl not in DSLS:
            raise EnvError(f"dsl must be one of {', '.join(DSLS)}, not {dsl!r}")
        task = pick_task(task_id, suite, seed, split or self.split)
        with self._lock:
            self.task = task
            self.episode_dsl = dsl or self.dsl
            self._prompt = render_prompt(task, dsl=self.episode_dsl)
            self._state = self._new_state(episode_id or uuid.uuid4().hex, task.id)
            self.best_grade = None
            return self._observation()

    def step(self, action: Action) -> Observation:
        """Grade `action.code`; the observation carries the grade, feedback, reward and done."""
        with self._lock:
            if self.task is None:
                raise EnvError("call reset() before step()")
            if self._state.done:
                raise EnvError("the episode is over; call reset() to start another")
            task = self.task
        with tempfile.TemporaryDirectory(prefix="kgym-step-") as folder:
            path = Path(folder) / "submission.py"
            path.write_text(action.code, encoding="utf-8")
            grade = self.grader(task, path)
        return self.record(grade)

    def record(self, grade: GradeResult) -> Observation:
        """Account for one graded attempt (also how a resumed run replays earlier attempts)."""
        with self._lock:
            if self.task is None:
                raise EnvError("call reset() before step()")
            reward = reward_for(grade, self.reward_config)
            summary = GradeSummary.of(grade)
            state = self._state
            state.attempts += 1
            state.rewards.append(reward)
            state.episode_return = episode_return(state.rewards, self.return_config)
            if better(summary, state.best):
                state.best, state.best_reward = summary, reward
                self.best_grade = grade
            passed = grade.status == Status.passed
            state.done = (passed and self.stop_on_pass) or state.attempts >= self.max_attempts
            return self._observation(grade=grade, summary=summary, reward=reward)

    def _new_state(self, episode_id: str, task_id: str | None) -> State:
        returns = self.return_config
        described = returns.aggregate if returns.aggregate != "discounted" else f"discounted({returns.discount:g})"
        return State(episode_id=episode_id, task_id=task_id, max_attempts=self.max_attempts, reward_preset=self.reward_config.name, returns=described)

    @property
    def state(self) -> State:
        with self._lock:
            return self._state.model_copy(deep=True)

    def close(self) -> None:
        with self._lock:
            self.task = None
            self._state.done = True

    # ------------------------------------------------------------ async variants

    async def areset(self, task_id: str | None = None, seed: int | None = None, suite: str | None = None, split: str | None = None) -> Observation:
        return await asyncio.to_thread(self.reset, task_id, seed, suite, None, split)

    async def astep(self, action: Action) -> Observation:
        return await asyncio.to_thread(self.step, action)

    async def aclose(self) -> None:
        self.close()

    # ------------------------------------------------------------ helpers

    def _observation(self, grade: GradeResult | None = None, summary: GradeSummary | None = None, reward: float = 0.0) -> Observation:
        state = self._state
        assert state.task_id is not None
        return Observation(
            task_id=state.task_id,
            prompt=self._prompt,
            attempt=state.attempts,
            attempts_left=max(0, state.max_attempts - state.attempts),
            summary=summary,
            grade=grade,
            feedback=grade.feedback if grade is not None else "",
            reward=reward,
            done=state.done,
            masked=grade is not None and is_masked(grade),
        )

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
