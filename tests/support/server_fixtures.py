"""Helpers for the server and MCP tests: a fake grader building realistic
GradeResults, and the real app served by uvicorn on a free loopback port."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import uvicorn

from gym.grading.feedback import write_feedback
from gym.schema.result import Environment, GradeResult, Status, Timings, TimingSummary
from gym.serve.server import ServerConfig, create_app
from gym.tasks.model import Task

ENVIRONMENT = Environment(python="3.11", torch="2.13.0", triton="3.7.1", platform="linux", device="cpu", sandbox="fake")


def timing(median_s: float) -> TimingSummary:
    return TimingSummary(median_s=median_s, mean_s=median_s, p10_s=median_s, p90_s=median_s, min_s=median_s, reps=3)


class FakeGrader:
    """Grades by markers in the source: PASS passes (2x speedup), RAISE raises, WAIT blocks until released;
    anything else is a wrong answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.started = threading.Semaphore(0)

    def __call__(self, task: Task, submission: Path) -> GradeResult:
        self.calls += 1
        source = submission.read_text()
        if "WAIT" in source:
            self.started.release()
            self.release.wait(timeout=30)
        if "RAISE" in source:
            raise RuntimeError("fake grader exploded")
        passed = "PASS" in source
        result = GradeResult(
            task_id=task.id,
            task_version=task.spec.version,
            submission_sha256=hashlib.sha256(submission.read_bytes()).hexdigest(),
            status=Status.passed if passed else Status.wrong_answer,
            timings=Timings(device="cpu", interpreted=True, trial="float32 public #1", candidate=timing(0.001), reference=timing(0.002)) if passed else None,
            speedup_vs_eager=2.0 if passed else None,
            environment=ENVIRONMENT,
            feedback="",
            error=None if passed else "output 0 differs from the reference at 12 of 4096 elements",
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            duration_s=0.01,
        )
        return result.model_copy(update={"feedback": write_feedback(result)})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_server(config: ServerConfig) -> Iterator[str]:
    """Serve create_app(config) on 127.0.0.1 in a background thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
