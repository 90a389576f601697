"""`kgym run`'s engine: run folders, episodes, resume after a stop or a kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gym.errors import RunFolderError
from gym.harness.agents import AgentError, make_agent
from gym.harness.agents.base import Agent, AgentEpisode
from gym.harness.run_folder import RESULTS_FILE, RunConfig, read_grade, read_manifest, read_results
from gym.harness.runner import run_agent
from gym.schema.episode import Action, Observation
from gym.schema.result import Status
from gym.tasks.loader import find_task
from tests.support.fake_grades import marker_grader

TASKS = ["l1/vector_add", "l1/softmax", "l1/row_sum"]


def config(agent: str, attempts: int = 3, tasks: list[str] = TASKS, concurrency: int = 1) -> RunConfig:
    return RunConfig(agent=agent, tasks=tasks, attempts=attempts, concurrency=concurrency, sandbox="bwrap", device="cpu")


def replay_folder(root: Path) -> Path:
    """vector_add: fail, then pass; softmax: three failures; row_sum: a cheat, then a pass."""
    folder = root / "submissions"
    (folder / "l1/vector_add").mkdir(parents=True)
    (folder / "l1/vector_add/1.py").write_text("wrong = 1\n")
    (folder / "l1/vector_add/2.py").write_text("right = 1  # PASS\n")
    (folder / "l1/softmax").mkdir(parents=True)
    for n in (1, 2, 3, 4):
        (folder / f"l1/softmax/{n}.py").write_text(f"wrong = {n}\n")
    (folder / "l1/row_sum.py").write_text("# CHEAT\n")
    return folder


def keys(run_dir: Path) -> list[tuple[str, int]]:
    return [(line.task_id, line.attempt) for line in read_results(run_dir)]


def test_replay_run_writes_a_complete_run_folder(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []
    agent = make_agent("replay", folder=replay_folder(tmp_path))
    run_dir = tmp_path / "run"
    summary = run_agent(agent, [find_task(t) for t in TASKS], run_dir, config("replay", concurrency=2), grader=marker_grader(calls))
    assert summary.complete and not summary.interrupted and summary.graded_now == 6
    assert sorted(keys(run_dir)) == [("l1/row_sum", 1), ("l1/softmax", 1), ("l1/softmax", 2), ("l1/softmax", 3), ("l1/vector_add", 1), ("l1/vector_add", 2)]
    manifest = read_manifest(run_dir)
    assert manifest.ended_at is not None and agent.options()["folder"].endswith("submissions")
    assert manifest.episodes_ended == {"l1/vector_add": "passed", "l1/softmax": "budget", "l1/row_sum": "agent_stopped"}
    assert manifest.task_versions == {t: find_task(t).spec.version for t in TASKS}
    lines = {(line.task_id, line.attempt): line for line in read_results(run_dir)}
    assert lines[("l1/vector_add", 2)].status == Status.passed and lines[("l1/vector_add", 2)].episode_done
    assert lines[("l1/row_sum", 1)].status == Status.rejected and lines[("l1/row_sum", 1)].reward < 0
    for line in lines.values():
        folder = run_dir / line.path
        assert (folder / "submission.py").is_file() and json.loads((folder / "grade.json").read_text())["status"] == line.status.value
    assert summary.best["l1/vector_add"].status == Status.passed
    figures = summary.aggregate()
    assert figures is not None and figures.tasks == 3 and figures.passed == 1


def test_an_existing_run_is_never_overwritten_and_resume_checks_the_config(tmp_path: Path) -> None:
    agent = make_agent("replay", folder=replay_folder(tmp_path))
    run_dir = tmp_path / "run"
    tasks = [find_task("l1/vector_add")]
    run_agent(agent, tasks, run_dir, config("replay", tasks=["l1/vector_add"]), grader=marker_grader())
    with pytest.raises(RunFolderError, match="--resume"):
        run_agent(agent, tasks, run_dir, config("replay", tasks=["l1/vector_add"]), grader=marker_grader())
    with pytest.raises(RunFolderError, match="attempts"):
        run_agent(agent, tasks, run_dir, config("replay", attempts=5, tasks=["l1/vector_add"]), resume=True, grader=marker_grader())
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk/file").write_text("x")
    with pytest.raises(RunFolderError, match="not an empty folder"):
        run_agent(agent, tasks, tmp_path / "junk", config("replay", tasks=["l1/vector_add"]), grader=marker_grader())


def test_stop_then_resume_with_a_torn_line_regrades_nothing_done(tmp_path: Path) -> None:
    agent = make_agent("replay", folder=replay_folder(tmp_path))
    tasks = [find_task(t) for t in TASKS]
    run_dir = tmp_path / "run"
    stop = threading.Event()
    first_calls: list[tuple[str, str]] = []
    summary = run_agent(agent, tasks, run_dir, config("replay"), grader=marker_grader(first_calls), stop=stop, on_attempt=lambda line: stop.set())
    assert summary.interrupted and not summary.complete and len(first_calls) == 1
    assert read_manifest(run_dir).ended_at is None
    with open(run_dir / RESULTS_FILE, "a") as handle:
        handle.write('{"task_id": "l1/softmax", "attem')  # a kill -9 in the middle of a write
    resumed_calls: list[tuple[str, str]] = []
    summary = run_agent(
        make_agent("replay", folder=tmp_path / "submissions"), tasks, run_dir, config("replay"), resume=True, grader=marker_grader(resumed_calls)
    )
    assert summary.complete and summary.graded_now == 5
    assert first_calls[0] not in resumed_calls  # the finished attempt was not graded again
    all_keys = keys(run_dir)
    assert len(all_keys) == len(set(all_keys)) == 6
    assert read_manifest(run_dir).resumed == 1


class _Flaky(Agent):
    name = "flaky"

    def start(self, first: Observation, history: list[tuple[Action, Observation]]) -> AgentEpisode:
        if first.task_id == "l1/softmax":
            raise AgentError("the model endpoint is down")

        class Once(AgentEpisode):
            sent = False

            def propose(self, observation: Observation) -> Action | None:
                if self.sent:
                    return None
                self.sent = True
                return Action(code="# PASS")

            def transcript(self) -> list[dict[str, str]]:
                return [{"role": "assistant", "content": "# PASS"}]

        return Once()


def test_an_agent_failure_ends_its_episode_not_the_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = run_agent(_Flaky(), [find_task(t) for t in TASKS], run_dir, config("flaky"), grader=marker_grader())
    assert summary.ended["l1/softmax"].startswith("agent_error: AgentError: the model endpoint is down")
    assert summary.ended["l1/vector_add"] == "passed" and summary.ended["l1/row_sum"] == "passed"
    transcript = json.loads((run_dir / "attempts/l1/vector_add/1/transcript.json").read_text())
    assert transcript == [{"role": "assistant", "content": "# PASS"}]


def test_kill_9_mid_run_then_resume_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    """A real `kgym run` (real grades in the sandbox) killed with SIGKILL after its first result line."""
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "gym.cli", "run", "--agent", "solutions", "--out", str(run_dir)]
    for task in TASKS:
        command += ["--task", task]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if (run_dir / RESULTS_FILE).is_file() and (run_dir / RESULTS_FILE).read_bytes().count(b"\n") >= 1:
            break
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[0].decode()[-2000:]
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = keys(run_dir)
    assert 1 <= len(before) < len(TASKS)
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = keys(run_dir)
    assert sorted(after) == sorted((task, 1) for task in TASKS)
    assert after[: len(before)] == before  # earlier lines kept as they were
    lines = read_results(run_dir)
    # On failure, say which attempt did not pass and why (its grade's error), not only the summary line.
    not_passed = [f"{line.task_id}#{line.attempt}: {line.status.value}: {read_grade(run_dir, line).error}" for line in lines if line.status != Status.passed]
    assert not not_passed, not_passed
    assert "correct 3/3" in resumed.stdout, resumed.stdout
    manifest = read_manifest(run_dir)
    assert manifest.ended_at is not None and manifest.resumed == 1
