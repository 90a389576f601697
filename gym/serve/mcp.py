"""Model Context Protocol server (`kgym mcp`): Kernel Gym's tasks and grader as MCP tools.

Tools:
- `list_tasks(suite?)` -> the tasks (id, title, dtypes, contract kinds).
- `get_task(task_id)` -> one task with the full prompt an agent works from.
- `submit_kernel(task_id, code, wait=True)` -> grades the code in the sandbox; with
  `wait` (the default) answers the grade summary and feedback, else a submission
  id to poll with `get_result`.
- `get_result(submission_id, full=False)` -> the submission's state and, once
  graded, its summary and feedback (`full` adds the whole GradeResult JSON).

Grades go through the same bounded queue as the HTTP server (a full queue is a
tool error saying when to retry); a grader that raises yields an `infra_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from gym.errors import QueueFull, TaskLoadError
from gym.execution.local import local_grader
from gym.grading.infra_result import guarded
from gym.grading.options import GradeOptions
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.episode import GradeSummary, HarnessModel
from gym.schema.http import SubmissionState, TaskDetail, TaskInfo
from gym.schema.result import Dsl, GradeResult, Status
from gym.serve.queue import GradeQueue
from gym.serve.submissions import SubmissionStore
from gym.serve.task_views import task_detail, task_info
from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x names the same API FastMCP
    # attr-defined: the installed mcp 2 checks this line against its fastmcp module, which lacks FastMCP.
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,attr-defined]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

SERVER_NAME = "kernel-gym"


class KernelGrade(HarnessModel):
    """What submit_kernel and get_result answer."""

    submission_id: str = Field(description='Poll get_result with this id while state is not "done".')
    task_id: str = Field(description='The task graded against, e.g. "l1/softmax".')
    state: SubmissionState = Field(description='"queued", "running" or "done".')
    status: Status | None = Field(
        default=None,
        description=("The grade's status once done: passed, wrong_answer, compile_error, runtime_error, timeout, rejected, infra_error."),
    )
    summary: GradeSummary | None = Field(
        default=None,
        description="Speedups, speed-of-light fraction, interpreted flag, integrity flags; set once done.",
    )
    feedback: str = Field(
        default="",
        description='Written for the agent: what failed, where, likely causes; "" until done.',
    )
    result: GradeResult | None = Field(
        default=None,
        description="The whole GradeResult (trials, diagnostics, timings, environment), with get_result(full=True).",
    )


def _find(task_id: str) -> Task:
    try:
        return find_task(task_id)
    except TaskLoadError as error:
        raise ToolError(str(error)) from None


def create_mcp_server(
    *,
    sandbox: str = DEFAULT_SANDBOX,
    grader: Callable[[Task, Path], GradeResult] | None = None,
    max_concurrent_grades: int = 2,
    max_queue: int = 16,
    store: SubmissionStore | None = None,
) -> Any:
    """An MCPServer with Kernel Gym's tools; `grader` overrides the default, a `local` executor's grades (tests); `store`
    shares another server's submissions, queue and durable record (`kgym serve`'s `POST /mcp`)."""
    if store is None:
        safe = guarded(grader or local_grader(GradeOptions(sandbox=sandbox), max_concurrent_grades), sandbox)
        store = SubmissionStore(safe, GradeQueue(max_concurrent_grades, max_queue))
    server = MCPServer(
        SERVER_NAME,
        instructions="Kernel Gym grades Triton kernels against PyTorch reference ops. Call list_tasks, read a task's "
        "prompt with get_task, then submit_kernel with one Python file defining kernel(...) that launches "
        "@triton.jit kernels; read the feedback and resubmit until the status is 'passed'.",
    )

    def answer(submission_id: str, full: bool = False) -> KernelGrade:
        item = store.get(submission_id)
        if item is None:
            raise ToolError(f"no submission {submission_id!r}")
        return KernelGrade(
            submission_id=item.id,
            task_id=item.task_id,
            state=item.state,
            status=item.result.status if item.result else None,
            summary=item.summary,
            feedback=item.result.feedback if item.result else "",
            result=item.result if full else None,
        )

    @server.tool()
    def list_tasks(
        suite: Annotated[str | None, Field(description='Only this suite, e.g. "l1"; all when omitted.')] = None,
    ) -> list[TaskInfo]:
        """List Kernel Gym's tasks: id, title, dtypes and the kinds of closeness checks each must pass."""
        return [task_info(task) for task in sorted(discover(suite=suite).tasks, key=lambda task: task.id)]

    @server.tool()
    def get_task(
        task_id: Annotated[str, Field(description='Task id, e.g. "l1/softmax".')],
        dsl: Annotated[Dsl, Field(description='The kernel language the prompt asks for: "triton" (default) or "helion".')] = "triton",
    ) -> TaskDetail:
        """One task with the full prompt: reference source, kernel signature, shapes, dtypes, contract, allowed torch calls."""
        return task_detail(_find(task_id), dsl)

    @server.tool()
    async def submit_kernel(
        task_id: Annotated[str, Field(description='Task id, e.g. "l1/softmax".')],
        code: Annotated[
            str,
            Field(
                min_length=1,
                max_length=256 * 1024,
                description="The whole submission: one Python file defining kernel(...) that launches @triton.jit kernels (or calls @helion.kernel functions).",
            ),
        ],
        wait: Annotated[bool, Field(description="Wait for the grade (default); false answers a submission id to poll with get_result.")] = True,
    ) -> KernelGrade:
        """Grade a Triton kernel for a task in the sandbox: status, speedup and feedback written for you."""
        task = _find(task_id)
        try:
            item = store.submit(task, code)
        except QueueFull as error:
            raise ToolError(str(error)) from None
        if wait:
            await store.wait(item.id)
        return answer(item.id)

    @server.tool()
    def get_result(
        submission_id: Annotated[str, Field(description="The id submit_kernel answered.")],
        full: Annotated[bool, Field(description="Include the whole GradeResult (trials, diagnostics, timings).")] = False,
    ) -> KernelGrade:
        """A submission's state and, once graded, its status, summary and feedback."""
        return answer(submission_id, full)

    return server


def run_stdio(sandbox: str = DEFAULT_SANDBOX, **options: Any) -> None:
    """Serve the tools over stdio until the client disconnects (`kgym mcp`)."""
    create_mcp_server(sandbox=sandbox, **options).run("stdio")
