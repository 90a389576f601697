"""The HTTP/WebSocket server behind `kgym serve`: OpenEnv-compatible routes over `Env`.

Routes (every body and answer is a model in `gym.schema.http`):

- `POST /reset` `{"task_id"?, "seed"?, "suite"?}` -> `{"observation", "reward", "done", "metadata"}`;
  starts an episode in the session named by the `X-Session-Id` header, creating
  a session (and answering its id in that header and in `metadata.session_id`)
  when the header is absent or names no open session.
- `POST /step` `{"action": {"code": ...}}` -> same shape; grades one attempt.
- `GET /state` -> State; `DELETE /session` closes the session.
- `GET /schema`, `GET /health`, `GET /metadata`.
- `GET /tasks[?suite=S]`, `GET /tasks/{suite}/{name}`.
- `POST /submissions` `{"task_id", "code"}` -> 202 Submission; `GET /submissions/{id}` until `state == "done"`.
- `WS /ws`: one session per connection; messages `{"type": "reset"|"step"|"state"|"close", "data": {...}}`;
  an `X-Session-Id` header (or `?session_id=`) on the handshake resumes that session.
- `POST /mcp`: MCP's JSON-RPC in one request (`gym.serve.mcp_http`): the tools of `kgym mcp`, sharing
  this server's grading queue and durable record.

`/step` without a session header is a one-off episode, as on OpenEnv's HTTP server, when the action
names its task (`{"action": {"code": ..., "task_id": "l1/softmax"}}`); without a task it is a 400.

With `ServerConfig.token` set, every route except `GET /health` (HTTP, the WebSocket handshake and
`/mcp`) answers 401 unless the request carries `Authorization: Bearer <token>` (`gym.serve.auth`).

At most `max_concurrent_grades` grades run at once (steps and submissions
alike); up to `max_queue` more wait; past that the server answers 503 with a
Retry-After header. A malformed request gets a 4xx naming the bad field; a
grader that raises yields an `infra_error` grade, never a 500.

Nothing is lost when the server dies: submissions, their grades and every
episode's resets and graded steps are committed to the `ServeState` in
`ServerConfig.state` before the client is answered. A server started on the
same folder grades the submissions left without a grade, answers the finished
ones, and resumes a session named by its id with its attempts counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Header, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from gym.errors import KernelGymError, SessionsFull
from gym.execution.local import local_grader
from gym.grading.infra_result import guarded
from gym.grading.options import GradeOptions
from gym.harness.env import DEFAULT_ATTEMPTS, Env
from gym.harness.reward import ReturnConfig, RewardConfig
from gym.sandbox import DEFAULT_SANDBOX
from gym.schema.episode import MAX_CODE_BYTES, Action, Observation, State
from gym.schema.http import (
    SESSION_HEADER,
    WS_MESSAGES,
    ErrorDetail,
    ErrorResponse,
    HealthResponse,
    MetadataResponse,
    ResetRequest,
    SchemaResponse,
    StepRequest,
    StepResponse,
    Submission,
    SubmissionRequest,
    TaskDetail,
    TaskInfo,
    WSError,
    WSErrorCode,
    WSObservation,
    WSReset,
    WSStateReply,
    WSStep,
)
from gym.schema.result import Dsl, GradeResult
from gym.serve.auth import OPEN_PATHS, bearer, token_matches
from gym.serve.mcp import create_mcp_server
from gym.serve.mcp_http import handle_body
from gym.serve.queue import GradeQueue
from gym.serve.sessions import Session, SessionStore
from gym.serve.state import ServeState, now
from gym.serve.submissions import SubmissionStore
from gym.serve.task_views import task_detail, task_info
from gym.tasks.loader import discover, find_task
from gym.tasks.model import Task
from gym.tasks.splits import SPLITS

VERSION = "1"
# Largest request body accepted (a submission's code is at most MAX_CODE_BYTES; JSON escaping can double it).
MAX_BODY_BYTES = 4 * MAX_CODE_BYTES

# The session header, as a route parameter (module level: routes resolve their annotations here).
SessionId = Annotated[str | None, Header(alias=SESSION_HEADER)]


class ServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    sandbox: str = Field(
        default=DEFAULT_SANDBOX,
        description=('Sandbox backend for every grade: "bwrap" (default), "docker" or "process" (unsafe, debugging only).'),
    )
    max_attempts: int = Field(default=DEFAULT_ATTEMPTS, ge=1, description="Attempts per episode.")
    max_concurrent_grades: int = Field(
        default=2,
        ge=1,
        description="Grades running at once (steps and submissions together).",
    )
    max_queue: int = Field(default=16, ge=0, description="Grades waiting for a slot before the server answers 503.")
    split: Literal["train", "val", "test"] | None = Field(
        default=None, description="Serve only this split's tasks (draws, /tasks and named resets); None serves every task."
    )
    dsl: Dsl = Field(
        default="triton",
        description='The kernel language prompts ask for unless a request names one (/reset\'s `dsl`, /tasks/{id}?dsl=): "triton" or "helion".',
    )
    max_sessions: int = Field(
        default=64,
        ge=1,
        description="Open sessions (HTTP and WebSocket); the least recently used idle HTTP session makes room.",
    )
    reward: RewardConfig = Field(
        default_factory=RewardConfig, description="Every episode's reward function: a RewardConfig or a preset's name (\"kernrl\", ...; `kgym serve --reward`)."
    )
    returns: ReturnConfig = Field(
        default_factory=ReturnConfig,
        description='How an episode\'s turn rewards make State.episode_return ("best", "last", "discounted", "kevin"; `kgym serve --returns`).',
    )
    grader: Callable[[Task, Path], GradeResult] | None = Field(
        default=None,
        description=("grade(task, submission file) -> GradeResult; None runs gym.grade in `sandbox` (tests inject fakes)."),
    )
    state: Path | None = Field(
        default=None,
        description="Folder of the durable record (submissions, grades, episode attempts) a restarted server resumes from; "
        "None keeps it in a temporary folder, lost when the server stops (`kgym serve` defaults to the user's data folder).",
    )
    token: str | None = Field(
        default=None,
        min_length=1,
        description="Bearer token every route but /health requires (`Authorization: Bearer <token>`); None leaves the "
        "server open (`kgym serve` then binds only to loopback unless --insecure-no-auth).",
        repr=False,
    )


# ---------------------------------------------------------------- who may call


class BearerAuth:
    """ASGI middleware: every HTTP request and WebSocket handshake but `OPEN_PATHS` needs the bearer token.

    A refused WebSocket handshake is answered with an HTTP 401 where the server supports denial responses
    (uvicorn does), else closed before it is accepted (HTTP 403)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    def allowed(self, scope: dict[str, Any]) -> bool:
        if scope.get("path") in OPEN_PATHS:
            return True
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        return token_matches(bearer(headers.get("authorization")), self.token)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or self.allowed(scope):
            await self.app(scope, receive, send)
            return
        body = ErrorResponse(detail="missing or wrong bearer token: send 'Authorization: Bearer <token>' (KGYM_SERVE_TOKEN)")
        payload = body.model_dump_json(exclude_none=True).encode()
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="kernel-gym"')]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
        elif "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": payload})
        else:
            await send({"type": "websocket.close", "code": 1008})


# ---------------------------------------------------------------- helpers


class ApiError(HTTPException):
    """A refusal the routes decide themselves (missing header, unknown session or submission, step before reset).

    The library's own errors need no translation: a `KernelGymError` escaping a route is answered with its
    class's `http_status` (TaskLoadError 404, EnvError 409, QueueFull and SessionsFull 503 with Retry-After).
    """

    def __init__(self, status_code: int, detail: str, retry_after_s: int | None = None) -> None:
        headers = {"Retry-After": str(retry_after_s)} if retry_after_s is not None else None
        super().__init__(status_code=status_code, detail=detail, headers=headers)
        self.retry_after_s = retry_after_s


def summarise(errors: list[Any], prefix: str = "") -> tuple[str, list[ErrorDetail]]:
    """Pydantic/FastAPI validation errors as one line plus per-field details (never echoing the input)."""
    details = []
    for item in errors:
        loc = ".".join(str(part) for part in item.get("loc", ())) or "(request)"
        msg = "unknown field" if item.get("type") == "extra_forbidden" else str(item.get("msg", "invalid"))
        details.append(ErrorDetail(loc=prefix + loc, msg=msg, type=str(item.get("type", "value_error"))))
    line = "; ".join(f"{d.loc}: {d.msg}" for d in details[:5])
    if len(details) > 5:
        line += f"; and {len(details) - 5} more"
    return line or "invalid request", details


def retry_after(error: Exception) -> int | None:
    """Seconds a client should wait before retrying (QueueFull, SessionsFull, a 503 ApiError); None otherwise."""
    value = getattr(error, "retry_after_s", None)
    return value if isinstance(value, int) else None


def internal_body(error: Exception) -> ErrorResponse:
    return ErrorResponse(detail=f"internal error: {type(error).__name__}: {error}")


def gym_error_response(error: KernelGymError) -> JSONResponse:
    """A KernelGymError as the HTTP answer its class maps to; 500 (the default) reads as any internal error."""
    status = error.http_status
    if status == 500:
        return JSONResponse(internal_body(error).model_dump(mode="json", exclude_none=True), status_code=500)
    retry = retry_after(error)
    headers = {"Retry-After": str(retry)} if retry is not None else None
    body = ErrorResponse(detail=str(error), retry_after_s=retry)
    return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=status, headers=headers)


def metadata(session: Session) -> dict[str, Any]:
    return {"session_id": session.id, "episode_id": session.env.state.episode_id}


class Gym:
    """The server's shared parts: the durable record, sessions, the grading queue, submissions."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.grader = guarded(config.grader or local_grader(GradeOptions(sandbox=config.sandbox), config.max_concurrent_grades), config.sandbox)
        self.queue = GradeQueue(config.max_concurrent_grades, config.max_queue)
        # ServeStateError when the folder is held by another server or cannot be opened.
        self.serve_state = ServeState(config.state)
        self.sessions = SessionStore(self.make_env, config.max_sessions, self.serve_state)
        self.submissions = SubmissionStore(self.grader, self.queue, self.serve_state)
        # The tools of `kgym mcp`, over this server's submissions (POST /mcp).
        self.mcp = create_mcp_server(store=self.submissions)

    def make_env(self) -> Env:
        return Env(
            max_attempts=self.config.max_attempts,
            sandbox=self.config.sandbox,
            grader=self.grader,
            split=self.config.split,
            reward=self.config.reward,
            returns=self.config.returns,
            dsl=self.config.dsl,
        )

    def new_session(self, *, websocket: bool = False) -> Session:
        """A fresh session; SessionsFull (503, Retry-After) when every slot is busy."""
        return self.sessions.create(websocket=websocket)

    async def session(self, session_id: str | None) -> Session:
        """The session named by the header, resumed from the record when it is not open; 400 without one, 404 when unknown."""
        if not session_id:
            raise ApiError(
                400,
                f"missing {SESSION_HEADER} header: call POST /reset first and send back the id it answers "
                '(or name the task in the action, {"code": ..., "task_id": ...}, for a one-off step)',
            )
        session = await self.sessions.resume(session_id)
        if session is None:
            raise ApiError(404, f"no open session {session_id!r} (closed or never created); POST /reset starts one")
        return session

    async def socket_session(self, session_id: str | None) -> Session:
        """The session of a new WebSocket connection: a fresh one, or the named one resumed (409 when a connection holds it)."""
        if not session_id:
            return self.new_session(websocket=True)
        session = await self.session(session_id)
        if session.websocket:
            raise ApiError(409, f"session {session_id!r} is held by another WebSocket connection")
        session.websocket = True
        return session

    async def reset(self, session: Session, request: ResetRequest) -> Observation:
        async with session.lock:
            # TaskLoadError (404) and EnvError (409) reach the client as they are.
            return await asyncio.to_thread(self.sessions.reset, session, request)

    async def one_off(self, action: Action) -> Observation:
        """A stateless step (OpenEnv's HTTP `/step` without a session): one attempt at `action.task_id`, graded
        through the shared queue; nothing is kept but the grade's record of a submission."""
        env = self.make_env()
        # TaskLoadError (404) reaches the client as it is.
        await asyncio.to_thread(env.reset, action.task_id)
        async with self.queue.slot():
            return await asyncio.to_thread(env.step, action)

    async def step(self, session: Session, action: Action) -> Observation:
        submitted_at = now()
        async with session.lock:
            state = session.env.state
            if state.task_id is None or session.env.task is None:
                raise ApiError(409, "call /reset before /step")
            if action.task_id is not None and action.task_id != state.task_id:
                raise ApiError(409, f"the action names task {action.task_id!r} but this session's episode is on {state.task_id!r}")
            if state.done:
                raise ApiError(409, "the episode is over; call /reset to start another")
            # QueueFull (503, Retry-After) and EnvError (409) reach the client as they are.
            async with self.queue.slot():
                return await asyncio.to_thread(self.sessions.step, session, action, submitted_at)


# ---------------------------------------------------------------- the app


def create_app(config: ServerConfig | None = None) -> FastAPI:
    config = config or ServerConfig()
    gym = Gym(config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        gym.submissions.resume()
        yield
        gym.submissions.cancel()
        gym.sessions.close_all()
        gym.serve_state.close()

    app = FastAPI(
        title="Kernel Gym",
        version=VERSION,
        description="Multi-turn Triton kernel-writing episodes (OpenEnv-compatible). "
        f"HTTP sessions are named by the {SESSION_HEADER} header that /reset answers.",
        lifespan=lifespan,
    )
    app.state.gym = gym
    if config.token is not None:
        app.add_middleware(BearerAuth, token=config.token)

    # ------------------------------------------------------------ errors

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            body = ErrorResponse(detail=f"request body of {length} bytes is over the {MAX_BODY_BYTES}-byte limit")
            return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=413)
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        errors = list(error.errors())
        status = 400 if any(item.get("type") == "json_invalid" for item in errors) else 422
        detail, details = summarise(errors)
        return JSONResponse(ErrorResponse(detail=detail, errors=details).model_dump(mode="json", exclude_none=True), status_code=status)

    @app.exception_handler(KernelGymError)
    async def gym_error(_: Request, error: KernelGymError) -> JSONResponse:
        return gym_error_response(error)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException) -> JSONResponse:
        body = ErrorResponse(detail=str(error.detail), retry_after_s=retry_after(error))
        return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, error: Exception) -> JSONResponse:
        return JSONResponse(internal_body(error).model_dump(mode="json", exclude_none=True), status_code=500)

    # ------------------------------------------------------------ episode

    @app.post("/reset", response_model=StepResponse, tags=["episode"])
    async def reset(request: ResetRequest | None = None, session_id: SessionId = None) -> JSONResponse:
        session = await gym.sessions.resume(session_id) if session_id else None
        session = session or gym.new_session()
        observation = await gym.reset(session, request or ResetRequest())
        body = StepResponse.of(observation, metadata(session))
        return JSONResponse(body.model_dump(mode="json"), headers={SESSION_HEADER: session.id})

    @app.post("/step", response_model=StepResponse, tags=["episode"])
    async def step(request: StepRequest, session_id: SessionId = None) -> JSONResponse:
        if not session_id and request.action.task_id is not None:
            observation = await gym.one_off(request.action)
            return JSONResponse(StepResponse.of(observation, {"session_id": None, "episode_id": None}).model_dump(mode="json"))
        session = await gym.session(session_id)
        observation = await gym.step(session, request.action)
        body = StepResponse.of(observation, metadata(session))
        return JSONResponse(body.model_dump(mode="json"), headers={SESSION_HEADER: session.id})

    @app.get("/state", response_model=State, tags=["episode"])
    async def state(session_id: SessionId = None) -> State:
        return (await gym.session(session_id)).env.state

    @app.delete("/session", tags=["episode"])
    async def close_session(session_id: SessionId = None) -> dict[str, Any]:
        session = await gym.session(session_id)
        async with session.lock:
            gym.sessions.end(session.id)
        return {"session_id": session.id, "closed": True}

    # ------------------------------------------------------------ about the server

    @app.get("/health", response_model=HealthResponse, tags=["info"])
    async def health() -> HealthResponse:
        return HealthResponse(
            grades_running=gym.queue.running,
            grades_waiting=gym.queue.waiting,
            max_concurrent_grades=config.max_concurrent_grades,
            max_queue=config.max_queue,
            sessions=len(gym.sessions),
            max_sessions=config.max_sessions,
        )

    @app.get("/metadata", response_model=MetadataResponse, tags=["info"])
    async def get_metadata() -> MetadataResponse:
        return MetadataResponse(
            name="kernel-gym",
            description="Write a Triton kernel that matches a PyTorch reference under the task's closeness contract; "
            "each step grades one submission in a sandbox and returns structured feedback.",
            version=VERSION,
            sandbox=config.sandbox,
            max_attempts=config.max_attempts,
        )

    @app.get("/schema", response_model=SchemaResponse, tags=["info"])
    async def schema() -> SchemaResponse:
        return SchemaResponse(action=Action.model_json_schema(), observation=Observation.model_json_schema(), state=State.model_json_schema())

    # ------------------------------------------------------------ tasks

    @app.get("/tasks", response_model=list[TaskInfo], tags=["tasks"])
    async def tasks(suite: str | None = None, split: str | None = None) -> list[TaskInfo]:
        if split is not None and split not in SPLITS:
            raise HTTPException(status_code=422, detail=f"split must be one of {', '.join(SPLITS)}")
        if gym.config.split is not None and split not in (None, gym.config.split):
            raise HTTPException(status_code=422, detail=f"this server serves the {gym.config.split} split only")
        report = await asyncio.to_thread(discover, None, None, suite, False, split or gym.config.split)
        return [task_info(task) for task in sorted(report.tasks, key=lambda task: task.id)]

    @app.get("/tasks/{task_id:path}", response_model=TaskDetail, tags=["tasks"])
    async def task(task_id: str, dsl: Dsl | None = None) -> TaskDetail:
        """One task with its prompt; `?dsl=helion` asks for Helion kernels (default: the server's --dsl)."""
        found = await asyncio.to_thread(find_task, task_id)
        return await asyncio.to_thread(task_detail, found, dsl or gym.config.dsl)

    # ------------------------------------------------------------ submissions

    @app.post("/submissions", response_model=Submission, status_code=202, tags=["submissions"])
    async def submit(request: SubmissionRequest) -> JSONResponse:
        found = await asyncio.to_thread(find_task, request.task_id)
        item = gym.submissions.submit(found, request.code)
        return JSONResponse(item.model_dump(mode="json"), status_code=202, headers={"Location": f"/submissions/{item.id}"})

    @app.get("/submissions/{submission_id}", response_model=Submission, tags=["submissions"])
    async def submission(submission_id: str) -> Submission:
        item = gym.submissions.get(submission_id)
        if item is None:
            raise ApiError(404, f"no submission {submission_id!r}")
        return item

    # ------------------------------------------------------------ MCP

    @app.post("/mcp", tags=["mcp"])
    async def mcp(request: Request) -> Response:
        """MCP JSON-RPC (initialize, ping, tools/list, tools/call) answered in the response body."""
        answer = await handle_body(gym.mcp, await request.body())
        if answer is None:
            return Response(status_code=202)
        return JSONResponse(answer)

    # ------------------------------------------------------------ WebSocket

    @app.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        await socket.accept()
        wanted = socket.headers.get(SESSION_HEADER) or socket.query_params.get("session_id")
        try:
            session = await gym.socket_session(wanted)
        except (ApiError, KernelGymError) as error:  # SessionsFull, an unknown or held session, a task that no longer loads
            code = WSErrorCode.CAPACITY_REACHED if isinstance(error, SessionsFull) else WSErrorCode.EXECUTION_ERROR
            await send_error(socket, code, str(error.detail) if isinstance(error, ApiError) else str(error))
            await socket.close()
            return
        try:
            while True:
                reply = await ws_handle(gym, session, await socket.receive_text())
                if reply is None:
                    break
                await socket.send_text(reply.model_dump_json())
        except WebSocketDisconnect:
            pass
        finally:
            gym.sessions.close(session.id)
        try:
            await socket.close()
        except RuntimeError:
            pass

    return app


async def send_error(socket: WebSocket, code: WSErrorCode, message: str, **extra: Any) -> None:
    await socket.send_text(WSError(data={"message": message, "code": code.value, **extra}).model_dump_json())


async def ws_handle(gym: Gym, session: Session, raw: str) -> BaseModel | None:
    """One WebSocket message -> its reply; None for "close"."""
    try:
        message = json.loads(raw)
    except json.JSONDecodeError as error:
        return WSError(data={"message": f"invalid JSON: {error}", "code": WSErrorCode.INVALID_JSON.value})
    kind = message.get("type") if isinstance(message, dict) else None
    model = WS_MESSAGES.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(WS_MESSAGES)
        return WSError(data={"message": f"unknown message type {kind!r} (known: {known})", "code": WSErrorCode.UNKNOWN_TYPE.value})
    try:
        parsed = model.model_validate(message)
    except ValidationError as error:
        detail, details = summarise(error.errors())
        return WSError(
            data={
                "message": detail,
                "code": WSErrorCode.VALIDATION_ERROR.value,
                "errors": [item.model_dump() for item in details],
            }
        )
    try:
        if isinstance(parsed, WSReset):
            return WSObservation(data=StepResponse.of(await gym.reset(session, parsed.data), metadata(session)))
        if isinstance(parsed, WSStep):
            return WSObservation(data=StepResponse.of(await gym.step(session, parsed.data), metadata(session)))
        if kind == "state":
            return WSStateReply(data=session.env.state.model_dump(mode="json"))
        return None
    except (ApiError, KernelGymError) as error:
        if isinstance(error, KernelGymError) and error.http_status == 500:
            raise  # an internal error ends the connection, as any unexpected exception does
        retry = retry_after(error)
        code = WSErrorCode.QUEUE_FULL if retry is not None else WSErrorCode.EXECUTION_ERROR
        extra = {"retry_after_s": retry} if retry is not None else {}
        message = str(error.detail) if isinstance(error, ApiError) else str(error)
        return WSError(data={"message": message, "code": code.value, **extra})


def serve(host: str = "127.0.0.1", port: int = 8000, *, log_level: str = "info", **config: Any) -> None:
    """Run the server with uvicorn until interrupted; `config` holds ServerConfig fields."""
    import uvicorn

    uvicorn.run(create_app(ServerConfig(**config)), host=host, port=port, log_level=log_level)
