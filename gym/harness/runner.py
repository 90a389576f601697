"""Run an agent over tasks into a run folder (what `kgym run` does).

Each task is one `Env` episode with the run's attempt budget. Every graded
attempt is written to its folder and then appended to results.jsonl; episode
ends are recorded in run.json. `resume=True` continues a run folder: finished
episodes are skipped, a half-finished one is replayed into its Env from the
recorded grades (nothing is regraded) and the agent is handed that history.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch

from gym.devices.pool import CPU_SLOT
from gym.errors import RunFolderError
from gym.execution.local import local_grader
from gym.grading.grader import environment
from gym.grading.options import GradeOptions
from gym.harness.agents.base import Agent
from gym.harness.env import Env, Grader
from gym.harness.reward import RewardConfig
from gym.harness.run_folder import (
    AttemptLine,
    ResultsLog,
    RunConfig,
    RunManifest,
    now_iso,
    read_grade,
    read_manifest,
    read_results,
    repair_results,
    write_attempt,
    write_manifest,
)
from gym.schema.aggregates import Aggregate, aggregate
from gym.schema.episode import Action, Observation
from gym.schema.ranking import best_graded
from gym.schema.result import GradeResult, Status
from gym.tasks.model import Task

# Called after each graded attempt, and when an episode ends (task id, reason).
AttemptHook = Callable[[AttemptLine], None]
EpisodeHook = Callable[[str, str], None]


@dataclass
class RunSummary:
    run_dir: Path
    # The best grade of every task that has at least one attempt.
    best: dict[str, GradeResult] = field(default_factory=dict)
    # Task id -> why its episode ended.
    ended: dict[str, str] = field(default_factory=dict)
    # Attempts graded in this invocation (not counting resumed ones).
    graded_now: int = 0
    complete: bool = False
    interrupted: bool = False

    # Every task of the run, graded or not.
    tasks: list[str] = field(default_factory=list)

    def aggregate(self) -> Aggregate | None:
        """Over every task of the run: a task without any graded attempt counts as not correct."""
        grades = [self.best[task] for task in self.tasks if task in self.best]
        unattempted = len([task for task in self.tasks if task not in self.best])
        return aggregate(grades, unattempted) if self.tasks else None


def gym_version() -> str:
    try:
        return version("kernel-gym")
    except PackageNotFoundError:
        return "unknown"


def _comparable(old: RunConfig, new: RunConfig) -> list[str]:
    keys = ("agent", "model", "tasks", "attempts", "sandbox", "device", "reward")
    return [key for key in keys if getattr(old, key) != getattr(new, key)]


class _Manifest:
    """run.json, rewritten atomically under a lock whenever an episode ends."""

    def __init__(self, run_dir: Path, manifest: RunManifest) -> None:
        self.run_dir = run_dir
        self.value = manifest
        self._lock = threading.Lock()

    def end_episode(self, task_id: str, reason: str) -> None:
        with self._lock:
            self.value.episodes_ended[task_id] = reason
            write_manifest(self.run_dir, self.value)

    def finish(self) -> None:
        with self._lock:
            self.value.ended_at = now_iso()
            write_manifest(self.run_dir, self.value)


def open_run(run_dir: Path, config: RunConfig, tasks: list[Task], resume: bool) -> RunManifest:
    """Create the run folder, or (resume) check it was made with the same config."""
    if (run_dir / "run.json").exists():
        if not resume:
            raise RunFolderError(f"{run_dir} already holds a run; pass --resume to continue it or choose another --out")
        manifest = read_manifest(run_dir)
        differ = _comparable(manifest.config, config)
        if differ:
            why = f"{run_dir} was started with a different {', '.join(differ)}; resume with the same settings"
            if "reward" in differ:
                # Its results.jsonl holds rewards of the recorded function: mixing two would make them incomparable.
                why += f" (it was started with --reward {manifest.config.reward.name}, not {config.reward.name})"
            raise RunFolderError(why)
        repair_results(run_dir)
        manifest.resumed += 1
        manifest.ended_at = None
        write_manifest(run_dir, manifest)
        return manifest
    if run_dir.exists() and any(run_dir.iterdir()):
        raise RunFolderError(f"{run_dir} exists and is not an empty folder or a run folder")
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = RunManifest(
        run_id=run_dir.resolve().name,
        config=config,
        environment=environment(torch.device(config.device), config.sandbox, None),
        task_versions={task.id: task.spec.version for task in tasks},
        gym_version=gym_version(),
        started_at=now_iso(),
    )
    write_manifest(run_dir, manifest)
    return manifest


def _end_reason(observation: Observation) -> str:
    if observation.summary is not None and observation.summary.status == Status.passed:
        return "passed"
    return "budget"


def run_episode(
    agent: Agent,
    task: Task,
    run_dir: Path,
    config: RunConfig,
    done_lines: list[AttemptLine],
    env: Env,
    log: ResultsLog,
    stop: threading.Event,
    on_attempt: AttemptHook | None,
) -> tuple[str, GradeResult | None, int]:
    """Play (or finish) one task's episode; returns why it ended, its best grade, attempts graded now."""
    first = env.reset(task_id=task.id)
    history: list[tuple[Action, Observation]] = []
    for line in sorted(done_lines, key=lambda line: line.attempt):
        grade = read_grade(run_dir, line)
        code = (run_dir / line.path / "submission.py").read_text(encoding="utf-8")
        history.append((Action(code=code), env.record(grade)))
    observation = history[-1][1] if history else first
    if observation.done:
        return _end_reason(observation), env.best_grade, 0
    graded = 0
    try:
        episode = agent.start(first, history)
        while not stop.is_set():
            action = episode.propose(observation)
            if action is None:
                return "agent_stopped", env.best_grade, graded
            observation = env.step(action)
            assert observation.grade is not None
            graded += 1
            path = write_attempt(run_dir, task.id, observation.attempt, action.code, observation.grade, episode.transcript())
            line = AttemptLine(
                task_id=task.id,
                task_version=task.spec.version,
                attempt=observation.attempt,
                status=observation.grade.status,
                reward=observation.reward,
                speedup_vs_eager=observation.grade.speedup_vs_eager,
                speedup_vs_compile=observation.grade.speedup_vs_compile,
                sol_fraction=observation.grade.sol_fraction,
                interpreted=observation.summary.interpreted if observation.summary else None,
                integrity_flags=observation.grade.integrity_flags,
                submission_sha256=observation.grade.submission_sha256,
                path=path,
                episode_done=observation.done,
                graded_at=observation.grade.graded_at,
                duration_s=observation.grade.duration_s,
            )
            log.append(line)
            if on_attempt is not None:
                on_attempt(line)
            if observation.done:
                return _end_reason(observation), env.best_grade, graded
    except Exception as error:  # noqa: BLE001 - an agent failure ends its episode, not the run
        return f"agent_error: {type(error).__name__}: {str(error)[:500]}", env.best_grade, graded
    return "interrupted", env.best_grade, graded


def run_agent(
    agent: Agent,
    tasks: list[Task],
    run_dir: Path,
    config: RunConfig,
    *,
    resume: bool = False,
    grader: Grader | None = None,
    reward: RewardConfig | None = None,
    on_attempt: AttemptHook | None = None,
    on_episode: EpisodeHook | None = None,
    stop: threading.Event | None = None,
    fresh_baselines: bool = False,
) -> RunSummary:
    """Play every task's episode (`config.concurrency` at once) into `run_dir`.

    `fresh_baselines` makes the default grader re-measure the reference baselines (and overwrite the
    cached ones) instead of reusing them; it is not part of the run's config (a run folder means the
    same either way) and is ignored with a `grader` of the caller's. Rewards are computed with
    `config.reward` (recorded in run.json); `reward`, when given, must be the same (ValueError otherwise)."""
    if reward is not None and reward != config.reward:
        raise ValueError(f"reward {reward.name} differs from the run config's {config.reward.name}: set RunConfig.reward instead")
    manifest = _Manifest(run_dir, open_run(run_dir, config, tasks, resume))
    if grader is None:
        options = GradeOptions(sandbox=config.sandbox, contract=config.contract, fresh_baselines=fresh_baselines)
        grader = local_grader(options, config.concurrency, [CPU_SLOT] if config.device == "cpu" else None)
    stop = stop or threading.Event()
    log = ResultsLog(run_dir)
    lines = read_results(run_dir)
    summary = RunSummary(run_dir=run_dir, tasks=[task.id for task in tasks])
    summary.ended = dict(manifest.value.episodes_ended)
    for line in lines:
        if line.episode_done and line.task_id not in summary.ended:
            summary.ended[line.task_id] = "passed" if line.status == Status.passed else "budget"
    for task_id in summary.ended:
        best = best_graded((read_grade(run_dir, line) for line in lines if line.task_id == task_id), lambda grade: grade)
        if best is not None:
            summary.best[task_id] = best
    pending = [task for task in tasks if task.id not in summary.ended]
    lock = threading.Lock()

    def play(task: Task) -> None:
        env = Env(max_attempts=config.attempts, grader=grader, reward=config.reward)
        done_lines = [line for line in lines if line.task_id == task.id]
        reason, best, graded = run_episode(agent, task, run_dir, config, done_lines, env, log, stop, on_attempt)
        with lock:
            summary.graded_now += graded
            if best is not None:
                summary.best[task.id] = best
        if reason != "interrupted":
            manifest.end_episode(task.id, reason)
            with lock:
                summary.ended[task.id] = reason
            if on_episode is not None:
                on_episode(task.id, reason)

    with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="kgym-episode") as pool:
        futures: list[Future[None]] = [pool.submit(play, task) for task in pending]
        try:
            for future in futures:
                future.result()
        except KeyboardInterrupt:
            stop.set()
            summary.interrupted = True
            for future in futures:
                future.cancel()
            raise
    summary.interrupted = summary.interrupted or stop.is_set()
    summary.complete = all(task.id in summary.ended for task in tasks)
    if summary.complete:
        manifest.finish()
    return summary
