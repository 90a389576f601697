"""POST /mcp (MCP's JSON-RPC in one HTTP request, as OpenEnv's servers answer it) and the one-off
`/step` without a session, against the real app on uvicorn with a fake grader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gym.schema.http import SESSION_HEADER
from gym.serve.client import GymClient
from gym.serve.mcp_http import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from gym.serve.server import ServerConfig
from tests.support.server_fixtures import FakeGrader, running_server

TASK = "l1/vector_add"
RIGHT = "def kernel(x, y):\n    return x + y  # PASS\n"
WRONG = "def kernel(x, y):\n    return x - y\n"
TOOLS = {"list_tasks", "get_task", "submit_kernel", "get_result"}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=3)) as url:
        yield url


def rpc(base_url: str, method: str, params: dict[str, Any] | None = None, request_id: int | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    response = httpx.post(base_url + "/mcp", json=message, timeout=30)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id
    return answer  # type: ignore[no-any-return]


def structured(answer: dict[str, Any]) -> dict[str, Any]:
    result = answer["result"]
    assert not result.get("isError"), result
    if "structuredContent" in result:
        return result["structuredContent"]  # type: ignore[no-any-return]
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


def test_initialize_and_list_the_tools(base_url: str) -> None:
    hello = rpc(base_url, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})
    assert hello["result"]["serverInfo"]["name"] == "kernel-gym" and "tools" in hello["result"]["capabilities"]
    assert rpc(base_url, "ping")["result"] == {}
    tools = {tool["name"]: tool for tool in rpc(base_url, "tools/list")["result"]["tools"]}
    assert set(tools) == TOOLS
    assert "code" in tools["submit_kernel"]["inputSchema"]["properties"]


def test_a_tool_call_grades_through_the_servers_own_submissions(base_url: str) -> None:
    listed = structured(rpc(base_url, "tools/call", {"name": "list_tasks", "arguments": {"suite": "l1"}}))
    assert TASK in {item["id"] for item in listed["result"]}
    graded = structured(rpc(base_url, "tools/call", {"name": "submit_kernel", "arguments": {"task_id": TASK, "code": RIGHT}}))
    assert graded["status"] == "passed" and graded["state"] == "done"
    # The same submission, seen through the HTTP routes: one store, one durable record.
    with GymClient(base_url) as client:
        assert client.submission(graded["submission_id"]).result.status.value == "passed"  # type: ignore[union-attr]
    polled = structured(rpc(base_url, "tools/call", {"name": "get_result", "arguments": {"submission_id": graded["submission_id"]}}))
    assert polled["status"] == "passed"


def test_a_failing_tool_is_a_tool_error_not_a_transport_error(base_url: str) -> None:
    unknown_task = rpc(base_url, "tools/call", {"name": "get_task", "arguments": {"task_id": "l1/nope"}})["result"]
    assert unknown_task["isError"] and "l1/nope" in unknown_task["content"][0]["text"]
    unknown_tool = rpc(base_url, "tools/call", {"name": "format_disk", "arguments": {}})["result"]
    assert unknown_tool["isError"]


def test_malformed_messages_get_json_rpc_errors_with_http_200(base_url: str) -> None:
    empty = httpx.post(base_url + "/mcp", json={})  # what `openenv validate` sends
    assert empty.status_code == 200 and empty.json()["jsonrpc"] == "2.0" and empty.json()["error"]["code"] == INVALID_REQUEST
    garbage = httpx.post(base_url + "/mcp", content=b"{not json", headers={"content-type": "application/json"})
    assert garbage.status_code == 200 and garbage.json()["error"]["code"] == PARSE_ERROR
    assert rpc(base_url, "resources/list")["error"]["code"] == METHOD_NOT_FOUND
    assert rpc(base_url, "tools/call", {"arguments": {}})["error"]["code"] == INVALID_PARAMS
    assert httpx.post(base_url + "/mcp", json=[]).json()["error"]["code"] == INVALID_REQUEST


def test_notifications_get_no_answer_and_batches_get_one_each(base_url: str) -> None:
    note = httpx.post(base_url + "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202 and note.content == b""
    batch = httpx.post(
        base_url + "/mcp",
        json=[
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ],
    ).json()
    assert [item["id"] for item in batch] == [1, 2]


def test_a_step_without_a_session_is_a_one_off_episode_when_it_names_the_task(base_url: str) -> None:
    answer = httpx.post(base_url + "/step", json={"action": {"code": RIGHT, "task_id": TASK}})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["done"] is True and body["reward"] > 1.0 and body["observation"]["task_id"] == TASK
    assert body["metadata"] == {"session_id": None, "episode_id": None} and SESSION_HEADER.lower() not in answer.headers
    wrong = httpx.post(base_url + "/step", json={"action": {"code": WRONG, "task_id": TASK}}).json()
    assert wrong["reward"] == 0.0 and wrong["observation"]["summary"]["status"] == "wrong_answer"
    assert httpx.post(base_url + "/step", json={"action": {"code": RIGHT, "task_id": "l1/nope"}}).status_code == 404


def test_a_step_without_a_session_or_a_task_is_a_400_naming_the_header(base_url: str) -> None:
    answer = httpx.post(base_url + "/step", json={"action": {"code": RIGHT}})
    assert answer.status_code == 400 and SESSION_HEADER in answer.json()["detail"]


def test_in_a_session_the_action_may_not_name_another_task(base_url: str) -> None:
    with GymClient(base_url) as client:
        client.reset(task_id=TASK)
        answer = httpx.post(base_url + "/step", json={"action": {"code": RIGHT, "task_id": "l1/softmax"}}, headers={SESSION_HEADER: client.session_id or ""})
        assert answer.status_code == 409 and "l1/softmax" in answer.json()["detail"]
        same = httpx.post(base_url + "/step", json={"action": {"code": RIGHT, "task_id": TASK}}, headers={SESSION_HEADER: client.session_id or ""})
        assert same.status_code == 200 and same.json()["done"] is True
