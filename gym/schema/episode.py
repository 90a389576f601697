"""The harness's wire models: what an agent sends (`Action`), what it gets back
(`Observation`), and where an episode stands (`State`). Shared by `Env`, the
HTTP server, the MCP tools and the run folder; unknown keys are rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gym.schema.result import GradeResult, Status

# Largest submission accepted, in bytes of UTF-8 source.
MAX_CODE_BYTES = 256 * 1024


class HarnessModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Action(HarnessModel):
    # The whole submission: one Python file defining kernel(...) that launches @triton.jit kernels.
    code: str = Field(min_length=1, max_length=MAX_CODE_BYTES)


class GradeSummary(HarnessModel):
    """The figures of one grade an agent (or a table) needs; the full GradeResult travels beside it."""

    status: Status
    # Reference median time / candidate median time (eager PyTorch and torch.compile); None when not measured.
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    # Speed-of-light time / candidate time on a known GPU.
    sol_fraction: float | None = None
    # True when timed under the Triton interpreter (CPU): never compare with GPU figures.
    interpreted: bool | None = None
    integrity_flags: list[str] = []
    submission_sha256: str = ""

    @classmethod
    def of(cls, grade: GradeResult) -> GradeSummary:
        return cls(
            status=grade.status,
            speedup_vs_eager=grade.speedup_vs_eager,
            speedup_vs_compile=grade.speedup_vs_compile,
            sol_fraction=grade.sol_fraction,
            interpreted=grade.timings.interpreted if grade.timings is not None else None,
            integrity_flags=list(grade.integrity_flags),
            submission_sha256=grade.submission_sha256,
        )


class Observation(HarnessModel):
    # The task being solved, e.g. "l1/softmax".
    task_id: str
    # The task prompt (reference source, signature, public shapes, dtypes, contract, allowed torch calls).
    prompt: str
    # Attempts graded so far in this episode, and how many are left.
    attempt: int = Field(ge=0)
    attempts_left: int = Field(ge=0)
    # The last grade's summary and full result; None right after reset.
    summary: GradeSummary | None = None
    grade: GradeResult | None = None
    # Agent-facing feedback on the last attempt (what failed, where, likely causes); "" after reset.
    feedback: str = ""
    # Reward for the last attempt (see gym.harness.reward); 0 after reset.
    reward: float = 0.0
    # True when the episode is over (passed, or the attempt budget is spent).
    done: bool = False


class State(HarnessModel):
    # Unique per reset.
    episode_id: str
    # None before the first reset.
    task_id: str | None = None
    attempts: int = 0
    max_attempts: int
    # The best grade so far: a pass beats any failure, then the higher speedup vs eager.
    best: GradeSummary | None = None
    best_reward: float | None = None
    # Every attempt's reward, in order.
    rewards: list[float] = []
    done: bool = False
