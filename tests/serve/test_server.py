"""The HTTP/WebSocket server (`kgym serve`) driven through its client, served by
uvicorn on a loopback port. A fake grader stands in for all but one test."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gym.errors import GymClientError
from gym.schema.http import SESSION_HEADER, SubmissionState
from gym.schema.result import Status
from gym.serve.client import GymClient, GymSocket
from gym.serve.server import ServerConfig
from gym.tasks.loader import find_task
from tests.support.server_fixtures import FakeGrader, running_server

TASK = "l1/vector_add"
WRONG = "def kernel(x, y):\n    return x - y  # wrong\n"
RIGHT = "def kernel(x, y):\n    return x + y  # PASS\n"


@pytest.fixture(scope="module")
def grader() -> FakeGrader:
    return FakeGrader()


@pytest.fixture(scope="module")
def base_url(grader: FakeGrader) -> Iterator[str]:
    with running_server(ServerConfig(grader=grader, max_attempts=3)) as url:
        yield url


@pytest.fixture
def client(base_url: str) -> Iterator[GymClient]:
    with GymClient(base_url, timeout_s=30) as gym:
        yield gym


def test_multi_turn_episode(client: GymClient) -> None:
    first = client.reset(task_id=TASK)
    assert client.session_id
    assert first.task_id == TASK and "kernel" in first.prompt
    assert (first.attempt, first.attempts_left, first.reward, first.done) == (0, 3, 0.0, False)
    assert client.last_response is not None and client.last_response.metadata["session_id"] == client.session_id

    failed = client.step(WRONG)
    assert failed.grade is not None and failed.grade.status == Status.wrong_answer
    assert failed.summary is not None and failed.summary.status == Status.wrong_answer
    assert "differs" in failed.feedback
    assert (failed.attempt, failed.attempts_left, failed.reward, failed.done) == (1, 2, 0.0, False)

    passed = client.step(RIGHT)
    assert passed.grade is not None and passed.grade.status == Status.passed
    assert passed.reward == pytest.approx(1.5)  # correct 1 + 0.5 x log2(2x speedup)
    assert passed.done

    state = client.state()
    assert state.task_id == TASK and state.attempts == 2 and state.done
    assert state.rewards == [0.0, pytest.approx(1.5)]
    assert state.best is not None and state.best.status == Status.passed

    with pytest.raises(GymClientError) as over:
        client.step(RIGHT)
    assert over.value.status == 409 and "/reset" in over.value.detail

    again = client.reset(task_id=TASK)  # same session, fresh episode
    assert again.attempt == 0 and client.state().attempts == 0


def test_openenv_response_shape(base_url: str) -> None:
    reset = httpx.post(f"{base_url}/reset", json={"task_id": TASK})
    assert reset.status_code == 200
    body = reset.json()
    assert set(body) == {"observation", "reward", "done", "metadata"}
    assert "reward" not in body["observation"] and "done" not in body["observation"]
    session = reset.headers[SESSION_HEADER]
    assert body["metadata"]["session_id"] == session
    step = httpx.post(f"{base_url}/step", json={"action": {"code": RIGHT}}, headers={SESSION_HEADER: session})
    assert step.status_code == 200 and step.json()["done"] is True and step.json()["reward"] > 1


def test_reset_draws_a_task_reproducibly(client: GymClient) -> None:
    first = client.reset(suite="l1", seed=7)
    second = client.reset(suite="l1", seed=7)
    assert first.task_id == second.task_id and first.task_id.startswith("l1/")


def test_sessions_are_isolated(base_url: str) -> None:
    with GymClient(base_url) as one, GymClient(base_url) as two:
        one.reset(task_id=TASK)
        two.reset(task_id="l1/softmax")
        assert one.session_id != two.session_id
        one.step(WRONG)
        assert one.state().attempts == 1
        assert two.state().attempts == 0 and two.state().task_id == "l1/softmax"
        closed = two.session_id
        two.close_session()
        gone = httpx.get(f"{base_url}/state", headers={SESSION_HEADER: closed or ""})
        assert gone.status_code == 404 and "no open session" in gone.json()["detail"]
        assert one.state().attempts == 1
    missing = httpx.get(f"{base_url}/state")
    assert missing.status_code == 400 and SESSION_HEADER in missing.json()["detail"]
    unknown = httpx.post(f"{base_url}/step", json={"action": {"code": RIGHT}}, headers={SESSION_HEADER: "nope"})
    assert unknown.status_code == 404


def test_info_routes(client: GymClient) -> None:
    assert client.health().status == "healthy"
    meta = client.metadata()
    assert meta.name == "kernel-gym" and meta.session_header == SESSION_HEADER and meta.max_attempts == 3
    schema = client.schema()
    assert schema.action["properties"]["code"]["type"] == "string"
    assert "prompt" in schema.observation["properties"] and "episode_id" in schema.state["properties"]


def test_tasks(client: GymClient) -> None:
    listed = client.tasks()
    ids = [task.id for task in listed]
    assert TASK in ids and ids == sorted(ids)
    assert all(task.suite == "l1" for task in client.tasks(suite="l1"))
    detail = client.task(TASK)
    assert detail.id == TASK and "def kernel" in detail.prompt and detail.contract
    with pytest.raises(GymClientError) as unknown:
        client.task("l1/no_such_task")
    assert unknown.value.status == 404 and "no such task" in unknown.value.detail


def test_the_prompt_asks_for_the_kernel_language_named(base_url: str, client: GymClient) -> None:
    assert "## Submission format (Helion)" in client.task(TASK, dsl="helion").prompt
    assert "## Submission format (Helion)" not in client.task(TASK).prompt
    observation = client.reset(TASK, dsl="helion")
    assert "## Submission format (Helion)" in observation.prompt
    assert "## Submission format (Helion)" not in client.reset(TASK).prompt
    assert httpx.post(f"{base_url}/reset", json={"task_id": TASK, "dsl": "cuda"}, timeout=30).status_code == 422
    assert httpx.get(f"{base_url}/tasks/{TASK}", params={"dsl": "cuda"}, timeout=30).status_code == 422
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=3, dsl="helion")) as url, GymClient(url, timeout_s=30) as served:
        assert "## Submission format (Helion)" in served.reset(TASK).prompt
        assert "## Submission format (Helion)" not in served.reset(TASK, dsl="triton").prompt


def test_malformed_requests_get_precise_4xx(base_url: str, client: GymClient) -> None:
    client.reset(task_id=TASK)
    headers = {SESSION_HEADER: client.session_id or ""}
    cases = [
        ("/step", {"action": {"code": ""}}, 422, "body.action.code"),
        ("/step", {"action": {"code": "x", "language": "cuda"}}, 422, "body.action.language: unknown field"),
        ("/step", {"code": "x"}, 422, "body.action: Field required"),
        ("/reset", {"task_id": TASK, "bogus": 1}, 422, "body.bogus: unknown field"),
        ("/reset", {"seed": -1}, 422, "body.seed"),
        ("/submissions", {"task_id": TASK}, 422, "body.code: Field required"),
    ]
    for path, body, status, fragment in cases:
        response = httpx.post(f"{base_url}{path}", json=body, headers=headers)
        assert response.status_code == status, (path, body, response.text)
        assert fragment in response.json()["detail"], (path, response.json())
        assert "Traceback" not in response.text
    broken = httpx.post(f"{base_url}/step", content=b"{not json", headers={**headers, "content-type": "application/json"})
    assert broken.status_code == 400 and "JSON" in broken.json()["detail"]
    huge = httpx.post(f"{base_url}/step", json={"action": {"code": "x" * 2_000_000}}, headers=headers)
    assert huge.status_code == 413 and "limit" in huge.json()["detail"]
    unknown_task = httpx.post(f"{base_url}/reset", json={"task_id": "l9/nothing"})
    assert unknown_task.status_code == 404 and "no such task" in unknown_task.json()["detail"]


def test_grader_exception_is_an_infra_error(client: GymClient) -> None:
    client.reset(task_id=TASK)
    observation = client.step("def kernel(x, y):\n    return x  # RAISE\n")
    assert observation.grade is not None and observation.grade.status == Status.infra_error
    assert "fake grader exploded" in (observation.grade.error or "")
    assert observation.reward == 0.0 and not observation.done
    submission = client.submit(TASK, "# RAISE")
    result = client.wait_result(submission.id, timeout_s=10, poll_s=0.05)
    assert result.status == Status.infra_error and "exploded" in result.feedback


def test_async_submission(client: GymClient) -> None:
    accepted = client.submit(TASK, RIGHT)
    assert accepted.state in (SubmissionState.queued, SubmissionState.running, SubmissionState.done)
    result = client.wait_result(accepted.id, timeout_s=10, poll_s=0.05)
    assert result.status == Status.passed and result.task_id == TASK
    final = client.submission(accepted.id)
    assert final.state == SubmissionState.done and final.summary is not None and final.summary.speedup_vs_eager == 2.0
    with pytest.raises(GymClientError) as missing:
        client.submission("nope")
    assert missing.value.status == 404
    with pytest.raises(GymClientError) as unknown:
        client.submit("l9/nothing", RIGHT)
    assert unknown.value.status == 404


def test_submission_answers_202(base_url: str) -> None:
    response = httpx.post(f"{base_url}/submissions", json={"task_id": TASK, "code": WRONG})
    assert response.status_code == 202
    assert response.headers["Location"] == f"/submissions/{response.json()['id']}"


def test_websocket_episode(base_url: str) -> None:
    url = base_url.replace("http://", "ws://") + "/ws"
    with GymSocket(url, timeout_s=30) as episode:
        with pytest.raises(GymClientError) as early:
            episode.step(RIGHT)
        assert early.value.code == "EXECUTION_ERROR" and "/reset" in early.value.detail
        first = episode.reset(task_id=TASK)
        assert first.task_id == TASK and first.attempt == 0
        failed = episode.step(WRONG)
        assert failed.grade is not None and failed.grade.status == Status.wrong_answer and not failed.done
        wrapped = episode.call({"type": "step", "data": {"action": {"code": RIGHT}}})  # the wrapped form works too
        assert wrapped["type"] == "observation" and wrapped["data"]["done"] is True
        state = episode.state()
        assert state.attempts == 2 and state.done
        for message, code in [
            ({"type": "dance"}, "UNKNOWN_TYPE"),
            ({"type": "step", "data": {"code": ""}}, "VALIDATION_ERROR"),
            ({"type": "reset", "data": {"task": TASK}}, "VALIDATION_ERROR"),
        ]:
            with pytest.raises(GymClientError) as bad:
                episode.call(message)
            assert bad.value.code == code, message
        episode._socket.send("{nope")
        assert '"INVALID_JSON"' in str(episode._socket.recv(timeout=10))


def test_full_queue_answers_503_with_retry_after() -> None:
    grader = FakeGrader()
    config = ServerConfig(grader=grader, max_concurrent_grades=1, max_queue=1)
    with running_server(config) as url, GymClient(url, timeout_s=30) as gym:
        running = gym.submit(TASK, "# WAIT")
        assert grader.started.acquire(timeout=10)
        waiting = gym.submit(TASK, "# WAIT")
        assert gym.health().grades_waiting == 1
        with pytest.raises(GymClientError) as full:
            gym.submit(TASK, RIGHT)
        assert full.value.status == 503 and full.value.retry_after_s is not None and full.value.retry_after_s >= 1
        raw = httpx.post(f"{url}/submissions", json={"task_id": TASK, "code": RIGHT})
        assert raw.status_code == 503 and int(raw.headers["Retry-After"]) >= 1

        gym.reset(task_id=TASK)  # a step is refused too, and costs no attempt
        with pytest.raises(GymClientError) as step_full:
            gym.step(RIGHT)
        assert step_full.value.status == 503 and gym.state().attempts == 0

        grader.release.set()
        for item in (running, waiting):
            assert gym.wait_result(item.id, timeout_s=10, poll_s=0.05).status == Status.wrong_answer
        assert gym.step(RIGHT).done


def test_grades_run_at_most_max_concurrent() -> None:
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, max_concurrent_grades=2, max_queue=8)) as url, GymClient(url) as gym:
        items = [gym.submit(TASK, "# WAIT") for _ in range(4)]
        assert grader.started.acquire(timeout=10) and grader.started.acquire(timeout=10)
        assert not grader.started.acquire(timeout=0.3)  # the third waits for a slot
        health = gym.health()
        assert (health.grades_running, health.grades_waiting) == (2, 2)
        grader.release.set()
        for item in items:
            gym.wait_result(item.id, timeout_s=10, poll_s=0.05)


def test_default_bind_is_loopback() -> None:
    import inspect

    from gym.serve.server import serve

    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"


def test_end_to_end_with_the_real_grader() -> None:
    solution = find_task(TASK).solution_path.read_text()
    with running_server(ServerConfig()) as url, GymClient(url, timeout_s=120) as gym:
        gym.reset(task_id=TASK)
        observation = gym.step(solution)
        assert observation.grade is not None
        assert observation.grade.status == Status.passed, observation.feedback
        assert observation.done and observation.reward >= 0.5
        assert observation.grade.environment.sandbox == "bwrap"


def test_the_servers_reward_preset_and_return_reach_every_episode() -> None:
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, max_attempts=3, reward="kernelbench-fast-1.5", returns="last")) as url, GymClient(url) as gym:
        gym.reset(task_id=TASK)
        assert gym.state().reward_preset == "kernelbench-fast-1.5" and gym.state().returns == "last"
        passed = gym.step(RIGHT)
        # The fake grade passes at 2x: faster than p = 1.5, so fast_p pays `correct`.
        assert passed.reward == 1.0
        assert gym.state().episode_return == 1.0
