"""A served gym loses nothing: the real `kgym serve` process killed with SIGKILL
and started again on the same `--state` folder answers every submission it
accepted (each graded exactly once) and resumes its sessions with their
attempts counted. Real grades, kept cheap: a submission the static audit
rejects grades in a fraction of a second; the shipped vector_add solution is
the one slow grade, to be caught running. In-process servers with a fake grader
cover eviction, a graceful stop mid-grade and a task that vanished."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from gym.errors import ServeStateError
from gym.schema.http import SESSION_HEADER, Submission, SubmissionState
from gym.schema.result import Status
from gym.serve.client import GymClient, GymSocket
from gym.serve.server import ServerConfig, create_app
from gym.serve.state import DATABASE, ServeState, SubmissionRecord, now
from gym.tasks.loader import find_task
from tests.support.serve_process import KGYM, ServerProcess
from tests.support.server_fixtures import FakeGrader, free_port, running_server

TASK = "l1/vector_add"
# Refused by the static audit before any sandbox starts: a real grade in well under a second.
CHEAP = "import subprocess\n\ndef kernel(x, y):\n    return x + y\n"


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    """Started servers go in this list; whatever still runs is killed at the end."""
    started: list[ServerProcess] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            server.kill()


def wait_for(url: str, submission_id: str, states: set[SubmissionState], timeout_s: float = 240) -> Submission:
    deadline = time.monotonic() + timeout_s
    while True:
        item = Submission.model_validate(httpx.get(f"{url}/submissions/{submission_id}", timeout=30).json())
        if item.state in states:
            return item
        if time.monotonic() > deadline:
            raise TimeoutError(f"{submission_id} still {item.state.value}")
        time.sleep(0.05)


def refusal(ws_url: str) -> str:
    """The error a WebSocket handshake is answered with before the server closes the connection."""
    with connect(ws_url) as raw:
        reply = json.loads(raw.recv(timeout=30))
    assert reply["type"] == "error" and reply["data"]["code"] == "EXECUTION_ERROR", reply
    return str(reply["data"]["message"])


def recorded_grades(state: Path) -> dict[str, int]:
    """Submission id -> 1 when the record holds its grade, else 0 (read with the server stopped)."""
    with sqlite3.connect(state / DATABASE) as db:
        return dict(db.execute("SELECT id, grade IS NOT NULL FROM submissions WHERE session_id IS NULL").fetchall())


def test_submissions_survive_kill_9(tmp_path: Path, servers: list[ServerProcess]) -> None:
    state = tmp_path / "state"
    log = tmp_path / "serve.log"
    slow = find_task(TASK).solution_path.read_text()
    first = ServerProcess(state, log, "--concurrent-grades", "1")
    servers.append(first)
    with GymClient(first.url, timeout_s=60) as gym:
        finished = gym.submit(TASK, CHEAP).id
        before = wait_for(first.url, finished, {SubmissionState.done})
        running = gym.submit(TASK, slow).id
        queued = [gym.submit(TASK, CHEAP).id for _ in range(3)]
        assert wait_for(first.url, running, {SubmissionState.running, SubmissionState.done}).state == SubmissionState.running
        assert [gym.submission(item).state for item in queued] == [SubmissionState.queued] * 3
    first.kill()

    second = ServerProcess(state, log, "--concurrent-grades", "1")
    servers.append(second)
    ids = [finished, running, *queued]
    with GymClient(second.url, timeout_s=60) as gym:
        again = gym.submission(finished)
        assert again.state == SubmissionState.done and again.result == before.result  # answered, not regraded
        results = {item: wait_for(second.url, item, {SubmissionState.done}).result for item in ids}
    statuses = {item: result.status if result is not None else None for item, result in results.items()}
    assert statuses == {running: Status.passed, **dict.fromkeys([finished, *queued], Status.rejected)}, log.read_text()
    second.stop()
    assert recorded_grades(state) == dict.fromkeys(ids, 1)


def test_a_session_resumes_after_kill_9(tmp_path: Path, servers: list[ServerProcess]) -> None:
    state = tmp_path / "state"
    log = tmp_path / "serve.log"
    first = ServerProcess(state, log, "--attempts", "3")
    servers.append(first)
    ws_url = first.url.replace("http://", "ws://") + "/ws"
    with GymClient(first.url, timeout_s=60) as http, GymSocket(ws_url, timeout_s=60) as socket:
        http.reset(task_id=TASK)
        assert http.step(CHEAP).attempt == 1
        session, episode = http.session_id, http.state().episode_id
        socket.reset(task_id=TASK)
        assert socket.step(CHEAP).attempt == 1
        assert socket.last_response is not None
        ws_session = socket.last_response.metadata["session_id"]
    with GymClient(first.url, timeout_s=60) as closed:
        closed.reset(task_id=TASK)
        closed_id = closed.session_id
        closed.close_session()
    first.kill()

    second = ServerProcess(state, log, "--attempts", "3")
    servers.append(second)
    with GymClient(second.url, timeout_s=60, session_id=session) as http:
        resumed = http.state()
        assert (resumed.episode_id, resumed.task_id, resumed.attempts, resumed.rewards) == (episode, TASK, 1, [-1.0])
        observation = http.step(CHEAP)
        assert (observation.attempt, observation.attempts_left, observation.done) == (2, 1, False)
    with connect(second.url.replace("http://", "ws://") + "/ws", additional_headers={SESSION_HEADER: ws_session}) as raw:
        raw.send('{"type": "state"}')
        reply = json.loads(raw.recv(timeout=60))
        assert reply["type"] == "state" and reply["data"]["attempts"] == 1
    gone = httpx.get(f"{second.url}/state", headers={SESSION_HEADER: closed_id or ""})
    assert gone.status_code == 404 and "no open session" in gone.json()["detail"]
    second.stop()


# ---------------------------------------------------------------- in process, with a fake grader


def test_an_evicted_session_resumes_with_its_attempts(tmp_path: Path) -> None:
    with running_server(ServerConfig(grader=FakeGrader(), max_sessions=1, state=tmp_path / "state")) as url:
        with GymClient(url) as one, GymClient(url) as two:
            one.reset(task_id=TASK)
            one.step("# wrong")
            episode = one.state().episode_id
            two.reset(task_id=TASK)  # the only slot: one's Env is closed to make room
            assert two.state().attempts == 0
            back = one.state()
            assert (back.episode_id, back.attempts) == (episode, 1)
            assert one.step("# PASS").done and one.state().attempts == 2
            ws = url.replace("http://", "ws://") + "/ws"
            with GymSocket(f"{ws}?session_id={one.session_id}") as socket:
                assert socket.state().attempts == 2  # the WebSocket took the session over
                assert "held by another WebSocket" in refusal(f"{ws}?session_id={one.session_id}")
            assert "no open session" in refusal(f"{ws}?session_id=nope")


def test_a_stop_mid_grade_records_nothing_and_the_restart_grades_it_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, state=state)) as url, GymClient(url) as gym:
        item = gym.submit(TASK, "# WAIT PASS").id
        assert grader.started.acquire(timeout=10)
        threading.Timer(1.0, grader.release.set).start()  # lets the stopping server's grading thread end
    assert recorded_grades(state) == {item: 0}
    with running_server(ServerConfig(grader=grader, state=state)) as url, GymClient(url) as gym:
        assert gym.wait_result(item, timeout_s=10, poll_s=0.05).status == Status.passed
    assert recorded_grades(state) == {item: 1}


def test_a_resumed_submission_whose_task_vanished_is_an_infra_error(tmp_path: Path) -> None:
    state = tmp_path / "state"
    record = ServeState(state)
    record.insert(SubmissionRecord(id="lost", task_id="l9/gone", code="x = 1\n", submitted_at=now()))
    record.insert(SubmissionRecord(id="kept", task_id=TASK, code="# PASS\n", submitted_at=now()))
    record.close()
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, state=state)) as url, GymClient(url) as gym:
        lost = gym.wait_result("lost", timeout_s=10, poll_s=0.05)
        assert lost.status == Status.infra_error and "no longer loads" in (lost.error or "")
        assert gym.wait_result("kept", timeout_s=10, poll_s=0.05).status == Status.passed
    assert grader.calls == 1


def test_a_second_server_on_a_held_folder_is_refused(tmp_path: Path) -> None:
    held = ServeState(tmp_path / "state")
    try:
        with pytest.raises(ServeStateError, match="in use"):
            create_app(ServerConfig(grader=FakeGrader(), state=tmp_path / "state"))
        command = [str(KGYM), "serve", "--port", str(free_port()), "--state", str(tmp_path / "state")]
        refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        held.close()
    assert refused.returncode == 1 and "is in use by another kgym serve" in refused.stderr and "Traceback" not in refused.stderr
