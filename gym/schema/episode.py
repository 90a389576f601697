"""The harness's wire models: what an agent sends (`Action`), what it gets back
(`Observation`), and where an episode stands (`State`). Shared by `Env`, the
HTTP server, the MCP tools and the run folder; unknown keys are rejected."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from gym.schema.records import RecordModel
from gym.schema.result import GradeResult, Status

# Largest submission accepted, in bytes of UTF-8 source.
MAX_CODE_BYTES = 256 * 1024


class HarnessModel(RecordModel):
    """Base of the harness's models: unknown keys rejected (run-folder records read back by `read_record` ignore them)."""

    model_config = ConfigDict(extra="forbid")


# What a submission is, in every schema that carries one.
CODE_DESCRIPTION = "The whole submission: one Python file defining kernel(...) that launches @triton.jit kernels."


class Action(HarnessModel):
    code: str = Field(min_length=1, max_length=MAX_CODE_BYTES, description=CODE_DESCRIPTION)
    task_id: str | None = Field(
        default=None,
        description='The task this code is for, e.g. "l1/softmax": lets a /step without a session grade a one-off episode; '
        "in a session it must be the episode's task when given.",
    )


class GradeSummary(HarnessModel):
    """The figures of one grade an agent (or a table) needs; the full GradeResult travels beside it."""

    status: Status = Field(description="The grade's status.")
    speedup_vs_eager: float | None = Field(
        default=None,
        description="Reference (eager PyTorch) median time / candidate median time; None when not measured.",
    )
    speedup_vs_compile: float | None = Field(
        default=None,
        description="torch.compile median time / candidate median time; None when not measured.",
    )
    sol_fraction: float | None = Field(default=None, description="Speed-of-light time / candidate time on a known GPU.")
    interpreted: bool | None = Field(
        default=None,
        description="True when timed under the Triton interpreter (CPU): never compare with GPU figures.",
    )
    integrity_flags: list[str] = Field(
        default_factory=list,
        description='Integrity rules broken, e.g. "input_mutated:x".',
    )
    submission_sha256: str = Field(default="", description="sha256 of the submission file's bytes.")

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
    task_id: str = Field(description='The task being solved, e.g. "l1/softmax".')
    prompt: str = Field(
        description=("The task prompt (reference source, signature, public shapes, dtypes, contract, allowed torch calls)."),
    )
    attempt: int = Field(ge=0, description="Attempts graded so far in this episode.")
    attempts_left: int = Field(ge=0, description="Attempts left in this episode.")
    summary: GradeSummary | None = Field(default=None, description="The last grade's summary; None right after reset.")
    grade: GradeResult | None = Field(default=None, description="The last grade's full result; None right after reset.")
    feedback: str = Field(
        default="",
        description='Agent-facing feedback on the last attempt (what failed, where, likely causes); "" after reset.',
    )
    reward: float = Field(
        default=0.0,
        description="Reward for the last attempt (see gym.harness.reward); 0 after reset.",
    )
    done: bool = Field(
        default=False,
        description="True when the episode is over (passed, or the attempt budget is spent).",
    )
    masked: bool = Field(
        default=False,
        description=(
            "True when the last attempt's grade is a masked infra_error (the submission could not have caused it; "
            "gym.harness.reward.is_masked): an RL trainer should drop the sample rather than train on `reward`, "
            "which is then RewardConfig.infra, never more than a wrong answer. False after reset."
        ),
    )


class State(HarnessModel):
    episode_id: str = Field(description="Unique per reset.")
    task_id: str | None = Field(default=None, description="The task being solved; None before the first reset.")
    attempts: int = Field(default=0, description="Attempts graded so far in this episode.")
    max_attempts: int = Field(description="Attempts allowed per episode.")
    best: GradeSummary | None = Field(
        default=None,
        description="The best grade so far: a pass beats any failure, then the higher speedup vs eager.",
    )
    best_reward: float | None = Field(
        default=None,
        description="The reward of the best grade; None before the first attempt.",
    )
    rewards: list[float] = Field(default_factory=list, description="Every attempt's reward, in order.")
    reward_preset: str = Field(default="default", description='The reward preset the rewards are computed with ("default", "kernrl", ...; gym.harness.reward).')
    returns: str = Field(default="best", description='How the turns\' rewards make the episode\'s return: "best", "last", or "discounted(<gamma>)".')
    episode_return: float | None = Field(default=None, description="The episode's return so far under `returns`; None before the first attempt.")
    done: bool = Field(
        default=False,
        description="True when the episode is over (passed, or the attempt budget is spent).",
    )
