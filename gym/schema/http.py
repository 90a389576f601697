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
from gym.schema.result import Dsl, GradeResult
from gym.schema.task_metadata import TaskMetadata

# Header naming an HTTP session (one Env each); /reset creates one when absent.
SESSION_HEADER = "X-Session-Id"


# ---------------------------------------------------------------- episode


class ResetRequest(HarnessModel):
    task_id: str | None = Field(
        default=None,
        description='The task to solve, e.g. "l1/softmax"; None draws one (from `suite`, reproducibly with `seed`).',
    )
    seed: int | None = Field(default=None, ge=0, description="Seed for the draw when task_id is None.")
    suite: str | None = Field(default=None, description='Restrict the draw to one suite, e.g. "l1".')
    split: Literal["train", "val", "test"] | None = Field(
        default=None, description="Restrict the draw to one split (a server started with --split allows only its own)."
    )
    dsl: Dsl | None = Field(
        default=None,
        description='The kernel language the prompt asks for: "triton" or "helion"; None: the server\'s (`kgym serve --dsl`, default triton).',
    )


class StepRequest(HarnessModel):
    action: Action = Field(description='The submission: {"code": "<one Python file>"}.')


class StepResponse(HarnessModel):
    """What /reset and /step answer (OpenEnv's ResetResponse/StepResponse shape)."""

    observation: dict[str, Any] = Field(
        description='Every Observation field except reward and done (see GET /schema, "observation").',
    )
    reward: float = Field(description="Reward for the last attempt (0 after reset).")
    done: bool = Field(description="True when the episode is over.")
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description='{"session_id": ..., "episode_id": ...}: which session answered.',
    )

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
    status: Literal["healthy"] = Field(default="healthy", description='"healthy" while the server answers.')
    grades_running: int = Field(description="Grades running now.")
    grades_waiting: int = Field(description="Grades waiting for a slot.")
    max_concurrent_grades: int = Field(description="Most grades run at once.")
    max_queue: int = Field(description="Most grades waiting before the server answers 503.")
    sessions: int = Field(description="Open sessions (HTTP and WebSocket).")
    max_sessions: int = Field(description="Most open sessions.")


class MetadataResponse(HarnessModel):
    name: str = Field(description='The environment\'s name ("kernel-gym").')
    description: str = Field(description="What an agent is asked to do, in one paragraph.")
    version: str = Field(description="Version of the server's API.")
    sandbox: str = Field(description="The sandbox backend every grade runs in.")
    max_attempts: int = Field(description="Attempts per episode.")
    session_header: str = Field(default=SESSION_HEADER, description="Header that names an HTTP session.")


class SchemaResponse(HarnessModel):
    action: dict[str, Any] = Field(description="JSON schema of Action.")
    observation: dict[str, Any] = Field(description="JSON schema of Observation.")
    state: dict[str, Any] = Field(description="JSON schema of State.")


class TaskInfo(HarnessModel):
    id: str = Field(description='"<suite>/<name>".')
    suite: str = Field(description='The suite, e.g. "l1".')
    version: int = Field(description="The task's version (bumped whenever anything that changes grades changes).")
    title: str = Field(description="One-line title.")
    dtypes: list[str] = Field(description="Dtype variants graded everywhere.")
    contract: list[str] = Field(description="Names of the contract's check kinds, in order.")
    split: str | None = Field(default=None, description="train, val or test: the task's stable split (README, Splits).")
    metadata: TaskMetadata | None = Field(
        default=None,
        description="Source, level, family, op kind, bench bytes and FLOPs, aten ops (for curricula); in listings as stored (unknown: unmeasured), in a task's detail measured.",
    )


class TaskDetail(TaskInfo):
    description: str = Field(description="What to compute, layout notes, pitfalls (from the task file).")
    prompt: str = Field(description="The prompt an agent sees (what /reset returns as observation.prompt).")


# ---------------------------------------------------------------- submissions


class SubmissionRequest(HarnessModel):
    task_id: str = Field(description='The task to grade against, e.g. "l1/vector_add".')
    code: str = Field(
        min_length=1,
        max_length=MAX_CODE_BYTES,
        description="The submission: one Python file defining kernel(...).",
    )


class SubmissionState(str, Enum):
    queued = "queued"
    running = "running"
    # Final: `result` holds the GradeResult (infra_error when the gym failed).
    done = "done"


class Submission(HarnessModel):
    id: str = Field(description="Opaque id; poll GET /submissions/{id}.")
    task_id: str = Field(description='The task graded against, e.g. "l1/vector_add".')
    state: SubmissionState = Field(description="queued, running or done.")
    submitted_at: str = Field(description="ISO-8601 UTC time the submission was received.")
    finished_at: str | None = Field(default=None, description="ISO-8601 UTC time the grade finished; None until then.")
    summary: GradeSummary | None = Field(default=None, description='The grade\'s summary; set once state is "done".')
    result: GradeResult | None = Field(default=None, description='The full GradeResult; set once state is "done".')


# ---------------------------------------------------------------- errors


class ErrorDetail(HarnessModel):
    loc: str = Field(description='Where in the request, e.g. "body.action.code".')
    msg: str = Field(description='What is wrong there, e.g. "unknown field".')
    type: str = Field(description='The error\'s type, e.g. "extra_forbidden".')


class ErrorResponse(HarnessModel):
    detail: str = Field(description="One line saying what was wrong.")
    errors: list[ErrorDetail] = Field(default_factory=list, description="Per-field problems for a malformed request.")
    retry_after_s: int | None = Field(default=None, description="Seconds to wait before retrying (queue full).")


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
    type: Literal["reset"] = Field(default="reset", description='Message type: "reset".')
    data: ResetRequest = Field(default=ResetRequest(), description="The reset request (task_id, seed, suite).")


class WSStep(HarnessModel):
    type: Literal["step"] = Field(default="step", description='Message type: "step".')
    data: Action = Field(
        description='The action: {"code": ...} (OpenEnv\'s form); {"action": {"code": ...}} is accepted too.',
    )

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("data"), dict) and set(value["data"]) == {"action"}:
            return {**value, "data": value["data"]["action"]}
        return value


class WSState(HarnessModel):
    type: Literal["state"] = Field(default="state", description='Message type: "state".')


class WSClose(HarnessModel):
    type: Literal["close"] = Field(default="close", description='Message type: "close".')


WS_MESSAGES: dict[str, type[HarnessModel]] = {"reset": WSReset, "step": WSStep, "state": WSState, "close": WSClose}


class WSObservation(HarnessModel):
    type: Literal["observation"] = Field(default="observation", description='Message type: "observation".')
    data: StepResponse = Field(
        description='{"observation": ..., "reward": ..., "done": ..., "metadata": ...}: the StepResponse shape.',
    )


class WSStateReply(HarnessModel):
    type: Literal["state"] = Field(default="state", description='Message type: "state".')
    data: dict[str, Any] = Field(description="The State model.")


class WSError(HarnessModel):
    type: Literal["error"] = Field(default="error", description='Message type: "error".')
    data: dict[str, Any] = Field(
        description='{"message": ..., "code": WSErrorCode, "errors"?: [...], "retry_after_s"?: n}',
    )
