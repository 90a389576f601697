"""The MCP server (`kgym mcp`): tools, schemas and grading through an MCP client,
in-process with a fake grader, and once over stdio with the real grader."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gym.serve.mcp import create_mcp_server
from gym.tasks.loader import find_task
from tests.support.server_fixtures import FakeGrader

TASK = "l1/vector_add"
ROOT = Path(__file__).resolve().parents[2]


def run(body: Callable[[Client], Awaitable[None]], server: Any) -> None:
    async def main() -> None:
        async with Client(server) as client:
            await body(client)

    asyncio.run(main())


def test_tools_and_schemas() -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"list_tasks", "get_task", "submit_kernel", "get_result"}
        submit = tools["submit_kernel"].input_schema
        assert set(submit["required"]) == {"task_id", "code"}
        assert submit["properties"]["code"]["minLength"] == 1 and "description" in submit["properties"]["code"]
        assert submit["properties"]["wait"]["default"] is True
        assert tools["get_result"].input_schema["required"] == ["submission_id"]
        assert all(tool.description for tool in tools.values())
        output = tools["submit_kernel"].output_schema
        assert output is not None and {"submission_id", "state", "status", "feedback"} <= set(output["properties"])

    run(body, create_mcp_server(grader=FakeGrader()))


def test_list_and_get_task() -> None:
    async def body(client: Client) -> None:
        listed = await client.call_tool("list_tasks", {"suite": "l1"})
        assert not listed.is_error and listed.structured_content is not None
        ids = [task["id"] for task in listed.structured_content["result"]]
        assert TASK in ids and all(task_id.startswith("l1/") for task_id in ids)
        task = await client.call_tool("get_task", {"task_id": TASK})
        assert not task.is_error and task.structured_content is not None
        assert "def kernel" in task.structured_content["prompt"]
        assert "## Submission format (Helion)" not in task.structured_content["prompt"]
        helion = await client.call_tool("get_task", {"task_id": TASK, "dsl": "helion"})
        assert not helion.is_error and helion.structured_content is not None
        assert "## Submission format (Helion)" in helion.structured_content["prompt"]
        missing = await client.call_tool("get_task", {"task_id": "l1/nope"})
        assert missing.is_error and "no such task" in missing.content[0].text  # type: ignore[union-attr]

    run(body, create_mcp_server(grader=FakeGrader()))


def test_submit_kernel_waits_for_the_grade() -> None:
    async def body(client: Client) -> None:
        failed = await client.call_tool("submit_kernel", {"task_id": TASK, "code": "def kernel(x, y): return x"})
        assert not failed.is_error and failed.structured_content is not None
        assert failed.structured_content["state"] == "done" and failed.structured_content["status"] == "wrong_answer"
        assert "differs" in failed.structured_content["feedback"]
        passed = await client.call_tool("submit_kernel", {"task_id": TASK, "code": "# PASS"})
        assert passed.structured_content is not None and passed.structured_content["status"] == "passed"
        assert passed.structured_content["summary"]["speedup_vs_eager"] == 2.0
        boom = await client.call_tool("submit_kernel", {"task_id": TASK, "code": "# RAISE"})
        assert boom.structured_content is not None and boom.structured_content["status"] == "infra_error"
        empty = await client.call_tool("submit_kernel", {"task_id": TASK, "code": ""})
        assert empty.is_error

    run(body, create_mcp_server(grader=FakeGrader()))


def test_submit_without_waiting_then_poll() -> None:
    async def body(client: Client) -> None:
        queued = await client.call_tool("submit_kernel", {"task_id": TASK, "code": "# PASS", "wait": False})
        assert queued.structured_content is not None and queued.structured_content["state"] in ("queued", "running", "done")
        submission_id = queued.structured_content["submission_id"]
        for _ in range(200):
            result = await client.call_tool("get_result", {"submission_id": submission_id, "full": True})
            assert result.structured_content is not None
            if result.structured_content["state"] == "done":
                break
            await asyncio.sleep(0.02)
        assert result.structured_content["status"] == "passed"
        assert result.structured_content["result"]["task_id"] == TASK
        unknown = await client.call_tool("get_result", {"submission_id": "nope"})
        assert unknown.is_error

    run(body, create_mcp_server(grader=FakeGrader()))


def test_stdio_with_the_real_grader() -> None:
    """`kgym mcp` in a subprocess, over stdio, grading the shipped solution in bwrap."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gym.cli", "mcp"],
        cwd=str(ROOT),
    )
    solution = find_task(TASK).solution_path.read_text()

    async def body(client: Client) -> None:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "submit_kernel" in tools
        graded = await client.call_tool("submit_kernel", {"task_id": TASK, "code": solution})
        assert not graded.is_error and graded.structured_content is not None
        assert graded.structured_content["status"] == "passed", graded.structured_content["feedback"]

    run(body, params)
