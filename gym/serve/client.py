"""A typed Python client for `kgym serve`: HTTP (`GymClient`) and WebSocket (`GymSocket`).

with GymClient("http://127.0.0.1:8000") as gym:
    observation = gym.reset(task_id="l1/vector_add")
    observation = gym.step(open("kernel.py").read())
    print(observation.summary, observation.reward, observation.done, gym.state())

with GymSocket("ws://127.0.0.1:8000/ws") as episode:
    observation = episode.reset(task_id="l1/vector_add")
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack, suppress
from typing import Any, Self

import httpx

from gym.errors import GymClientError
from gym.schema.episode import Action, Observation, State
from gym.schema.http import (
    SESSION_HEADER,
    HealthResponse,
    MetadataResponse,
    ResetRequest,
    SchemaResponse,
    StepResponse,
    Submission,
    SubmissionState,
    TaskDetail,
    TaskInfo,
)
from gym.schema.result import Dsl, GradeResult
from gym.serve.auth import auth_headers


def _action(code: str | Action) -> Action:
    return code if isinstance(code, Action) else Action(code=code)


class GymClient:
    """HTTP client; keeps the session id /reset answers and sends it back on every call."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        timeout_s: float = 600.0,
        session_id: str | None = None,
        token: str | None = None,
    ) -> None:
        """`token` (default: the KGYM_SERVE_TOKEN variable) is sent as `Authorization: Bearer <token>`."""
        self.session_id = session_id
        self.last_response: StepResponse | None = None
        self._http = httpx.Client(base_url=base_url, timeout=timeout_s, headers=auth_headers(token))

    # ------------------------------------------------------------ episode

    def reset(self, task_id: str | None = None, seed: int | None = None, suite: str | None = None, dsl: Dsl | None = None) -> Observation:
        body = ResetRequest(task_id=task_id, seed=seed, suite=suite, dsl=dsl).model_dump(exclude_none=True)
        response = self._request("POST", "/reset", json=body)
        self.session_id = response.headers[SESSION_HEADER]
        return self._observation(response)

    def step(self, code: str | Action) -> Observation:
        response = self._request("POST", "/step", json={"action": _action(code).model_dump()})
        return self._observation(response)

    def state(self) -> State:
        return State.model_validate(self._request("GET", "/state").json())

    def close_session(self) -> None:
        if self.session_id is not None:
            self._request("DELETE", "/session")
            self.session_id = None

    # ------------------------------------------------------------ tasks and server

    def tasks(self, suite: str | None = None) -> list[TaskInfo]:
        params = {"suite": suite} if suite else None
        return [TaskInfo.model_validate(item) for item in self._request("GET", "/tasks", params=params).json()]

    def task(self, task_id: str, dsl: Dsl | None = None) -> TaskDetail:
        params = {"dsl": dsl} if dsl else None
        return TaskDetail.model_validate(self._request("GET", f"/tasks/{task_id}", params=params).json())

    def health(self) -> HealthResponse:
        return HealthResponse.model_validate(self._request("GET", "/health").json())

    def metadata(self) -> MetadataResponse:
        return MetadataResponse.model_validate(self._request("GET", "/metadata").json())

    def schema(self) -> SchemaResponse:
        return SchemaResponse.model_validate(self._request("GET", "/schema").json())

    # ------------------------------------------------------------ submissions

    def submit(self, task_id: str, code: str) -> Submission:
        return Submission.model_validate(self._request("POST", "/submissions", json={"task_id": task_id, "code": code}).json())

    def submission(self, submission_id: str) -> Submission:
        return Submission.model_validate(self._request("GET", f"/submissions/{submission_id}").json())

    def wait_result(self, submission_id: str, *, timeout_s: float = 600.0, poll_s: float = 0.2) -> GradeResult:
        deadline = time.monotonic() + timeout_s
        while True:
            item = self.submission(submission_id)
            if item.state == SubmissionState.done and item.result is not None:
                return item.result
            if time.monotonic() > deadline:
                raise TimeoutError(f"submission {submission_id} still {item.state.value} after {timeout_s} s")
            time.sleep(poll_s)

    # ------------------------------------------------------------ plumbing

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {SESSION_HEADER: self.session_id} if self.session_id else {}
        response = self._http.request(method, path, headers=headers, **kwargs)
        if response.status_code >= 400:
            try:
                detail = str(response.json().get("detail", response.text))
            except ValueError:
                detail = response.text
            retry = response.headers.get("Retry-After")
            raise GymClientError(response.status_code, detail, retry_after_s=int(retry) if retry else None)
        return response

    def _observation(self, response: httpx.Response) -> Observation:
        self.last_response = StepResponse.model_validate(response.json())
        return self.last_response.to_observation()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GymSocket:
    """WebSocket client: one session for the connection's lifetime."""

    def __init__(self, url: str = "ws://127.0.0.1:8000/ws", *, timeout_s: float = 600.0, token: str | None = None) -> None:
        """`token` (default: the KGYM_SERVE_TOKEN variable) is sent on the handshake as `Authorization: Bearer <token>`."""
        from websockets.sync.client import connect

        self.timeout_s = timeout_s
        self.last_response: StepResponse | None = None
        self._stack = ExitStack()
        self._socket = self._stack.enter_context(connect(url, max_size=None, open_timeout=30, additional_headers=auth_headers(token)))

    def reset(self, task_id: str | None = None, seed: int | None = None, suite: str | None = None, dsl: Dsl | None = None) -> Observation:
        data = ResetRequest(task_id=task_id, seed=seed, suite=suite, dsl=dsl).model_dump(exclude_none=True)
        return self._observation(self.call({"type": "reset", "data": data}))

    def step(self, code: str | Action) -> Observation:
        return self._observation(self.call({"type": "step", "data": _action(code).model_dump()}))

    def state(self) -> State:
        return State.model_validate(self.call({"type": "state"})["data"])

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message, return the reply; an error reply raises GymClientError."""
        self._socket.send(json.dumps(message))
        reply = json.loads(self._socket.recv(timeout=self.timeout_s))
        if reply.get("type") == "error":
            data = reply.get("data", {})
            raise GymClientError(0, str(data.get("message")), code=data.get("code"), retry_after_s=data.get("retry_after_s"))
        return reply

    def _observation(self, reply: dict[str, Any]) -> Observation:
        self.last_response = StepResponse.model_validate(reply["data"])
        return self.last_response.to_observation()

    def close(self) -> None:
        with suppress(Exception):  # already closed
            self._socket.send(json.dumps({"type": "close"}))
        self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
