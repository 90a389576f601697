"""Wire messages of the HTTP/WebSocket server (`kgym serve`) and its client.

Follows OpenEnv's conventions: `/reset` and `/step` answer
`{"observation": {...}, "reward": r, "done": d, "metadata": {...}}` where the
observation carries every `Observation` field except `reward` and `done`
(promoted beside it); `/step` takes `{"action": {...}}`; WebSocket messages are
`{"type": ..., "data": {...}}`. Every message rejects unknown keys.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import Field, model_validator

from gym.schema.episode import (
    MAX_CODE_BYTES,
    Action,
    GradeSummary,
    HarnessModel,
    Observation,
)
from gym.tasks.prompt import render_prompt
from gym.schema.result import GradeResult
from gym.tasks.model import Task

# Header naming an HTTP session (one Env each); /reset creates one when absent.
SESSION_HEADER = "X-Session-Id"


# ---------------------------------------------------------------- episode


class ResetRequest(HarnessModel):
    # The task to solve, e.g. "l1/softmax"; None draws one (from `suite`, reproducibly with `seed`).
    task_id: str | None = None
    # Seed for the draw when task_id is None.
    seed: int | None = Field(default=None, ge=0)
    # Restrict the draw to one suite, e.g. "l1".
    suite: str | None = None


class StepRequest(HarnessModel):
    # The submission: {"code": "<one Python file>"}.
    action: Action


class StepResponse(HarnessModel):
    """What /reset and /step answer (OpenEnv's ResetResponse/StepResponse shape)."""

    # Every Observation field except reward and done (see GET /schema, "observation").
    observation: dict[str, Any]
    # Reward for the last attempt (0 after reset).
    reward: float
    # True when the episode is over.
    done: bool
    # {"session_id": ..., "episode_id": ...}: which session answered.
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, observation: Observation, metadata: dict[str, Any] | None = None) -> StepResponse:
        return cls(
            observation=observation.model_dump(mode="json", exclude={"reward", "done"}),
            reward=observation.reward,
            done=observation.done,
            metadata=metadata or {},
        )

    def to_observation(self) -> Observation:
        return Observation.model_validate({**self.observation, "reward": self.reward, "done": self.done})


# ---------------------------------------------------------------- server info


class HealthResponse(HarnessModel):
    # "healthy" while the server answers.
    status: Literal["healthy"] = "healthy"
    # Grades running now, grades waiting, and the limits.
    grades_running: int
    grades_waiting: int
    max_concurrent_grades: int
    max_queue: int
    # Open sessions (HTTP and WebSocket) and the limit.
    sessions: int
    max_sessions: int


class MetadataResponse(HarnessModel):
    name: str
    description: str
    version: str
    # The sandbox backend every grade runs in.
    sandbox: str
    # Attempts per episode.
    max_attempts: int
    # Header that names an HTTP session.
    session_header: str = SESSION_HEADER


class SchemaResponse(HarnessModel):
    # JSON schemas of Action, Observation and State.
    action: dict[str, Any]
    observation: dict[str, Any]
    state: dict[str, Any]


class TaskInfo(HarnessModel):
    # "<suite>/<name>".
    id: str
    suite: str
    version: int
    title: str
    dtypes: list[str]
    # Names of the contract's check kinds, in order.
    contract: list[str]

    @classmethod
    def of(cls, task: Task) -> TaskInfo:
        spec = task.spec
        return cls(
            id=task.id, suite=task.suite, version=spec.version, title=spec.title,
            dtypes=list(spec.dtypes), contract=[check.kind for check in spec.contract],
        )


class TaskDetail(TaskInfo):
    description: str
    # The prompt an agent sees (what /reset returns as observation.prompt).
    prompt: str

    @classmethod
    def of(cls, task: Task) -> TaskDetail:
        return cls(**TaskInfo.of(task).model_dump(), description=task.spec.description, prompt=render_prompt(task))


# ---------------------------------------------------------------- submissions


class SubmissionRequest(HarnessModel):
    # The task to grade against, e.g. "l1/vector_add".
    task_id: str
    # The submission: one Python file defining kernel(...).
    code: str = Field(min_length=1, max_length=MAX_CODE_BYTES)


class SubmissionState(str, Enum):
    queued = "queued"
    running = "running"
    # Final: `result` holds the GradeResult (infra_error when the gym failed).
    done = "done"


class Submission(HarnessModel):
    # Opaque id; poll GET /submissions/{id}.
    id: str
    task_id: str
    state: SubmissionState
    # ISO-8601 UTC times.
    submitted_at: str
    finished_at: str | None = None
    # Set once state is "done".
    summary: GradeSummary | None = None
    result: GradeResult | None = None


# ---------------------------------------------------------------- errors


class ErrorDetail(HarnessModel):
    # Where in the request, e.g. "body.action.code".
    loc: str
    msg: str
    type: str


class ErrorResponse(HarnessModel):
    # One line saying what was wrong.
    detail: str
    # Per-field problems for a malformed request.
    errors: list[ErrorDetail] = Field(default_factory=list)
    # Seconds to wait before retrying (queue full).
    retry_after_s: int | None = None


# ---------------------------------------------------------------- WebSocket


class WSErrorCode(str, Enum):
    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    # The call does not fit the episode (step before reset, after done, unknown task).
    EXECUTION_ERROR = "EXECUTION_ERROR"
    # Too many grades waiting; retry after data.retry_after_s.
    QUEUE_FULL = "QUEUE_FULL"
    # Too many open sessions.
    CAPACITY_REACHED = "CAPACITY_REACHED"


class WSReset(HarnessModel):
    type: Literal["reset"] = "reset"
    data: ResetRequest = ResetRequest()


class WSStep(HarnessModel):
    type: Literal["step"] = "step"
    # The action: {"code": ...} (OpenEnv's form); {"action": {"code": ...}} is accepted too.
    data: Action

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("data"), dict) and set(value["data"]) == {"action"}:
            return {**value, "data": value["data"]["action"]}
        return value


class WSState(HarnessModel):
    type: Literal["state"] = "state"


class WSClose(HarnessModel):
    type: Literal["close"] = "close"


WS_MESSAGES: dict[str, type[HarnessModel]] = {"reset": WSReset, "step": WSStep, "state": WSState, "close": WSClose}


class WSObservation(HarnessModel):
    type: Literal["observation"] = "observation"
    # {"observation": ..., "reward": ..., "done": ..., "metadata": ...}: the StepResponse shape.
    data: StepResponse


class WSStateReply(HarnessModel):
    type: Literal["state"] = "state"
    # The State model.
    data: dict[str, Any]


class WSError(HarnessModel):
    type: Literal["error"] = "error"
    # {"message": ..., "code": WSErrorCode, "errors"?: [...], "retry_after_s"?: n}
    data: dict[str, Any]
