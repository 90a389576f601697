"""`GradeOptions`: everything a grade is asked for besides its task, its submission and where it runs.

One typed object end to end: the CLI, `Env`, the runner, the server, MCP, the RL adapters and the
executors all build one and pass it down to `gym.grading.grader.grade(task, submission, options)`.
The device, the secret and a kept job folder are not options: the executor places each grade on a
device, a secret is per grade, and a kept job folder is a debugging aid of one call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gym.grading.confirm import ConfirmThreshold
from gym.grading.signal.traffic_model import DEFAULT_PROFILE
from gym.grading.timing.timing_policy import TimingPolicy
from gym.sandbox import DEFAULT_SANDBOX, Limits


class GradeOptions(BaseModel):
    """What a grade is asked for besides its task and submission (the device is the executor's to choose)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sandbox: str = Field(default=DEFAULT_SANDBOX, description='Sandbox backend: "bwrap", "docker" or "process" (unsafe).')
    include_hidden: bool = Field(default=True, description="Also check the task's hidden shapes.")
    timing_reps: int | None = Field(default=None, ge=0, description="Timed calls in the first round (None: the device's policy; 0: no timing).")
    timing: TimingPolicy | None = Field(default=None, description="Warm-up and stopping rule of the timing rounds (None: TimingPolicy.for_device).")
    timeout_s: float | None = Field(default=None, gt=0, description="Wall-clock limit of each job (None: the task's).")
    limits: Limits | None = Field(default=None, description="Resource limits of the sandboxed worker (None: the sandbox's defaults).")
    bench: bool | None = Field(default=None, description="Time every benchmark shape (None: on for a GPU, off on CPU).")
    late_calls: bool = Field(default=True, description="Add the late calls (off only to measure what they cost).")
    contract: str | None = Field(default=None, description='A contract preset graded against instead of the task\'s own (e.g. "kernelbench").')
    fresh_baselines: bool = Field(default=False, description="Re-measure the reference baselines instead of reusing cached ones.")
    warm: bool = Field(default=True, description="Take the worker from the warm pool when one is ready (False: always a cold start).")
    audit: bool = Field(default=True, description="Run the static audit of the source (off only to prove the run-time defences hold alone).")
    audit_hooks: bool = Field(default=True, description="Install the worker's run-time audit hooks (off only to prove the sandbox holds alone).")
    replay: bool = Field(default=True, description="Have the witness replay the calls' kernels alone on fresh inputs (off only to measure what it costs).")
    signal: bool = Field(
        default=True, description="Count one trial's traffic and profile one replay for the training signal (off only to measure what it costs)."
    )
    gpu_profile: str = Field(default=DEFAULT_PROFILE, description="The GPU profile the counted traffic is modelled on (gym/grading/timing/gpu_profiles.toml).")
    profile: Literal["ncu"] | None = Field(default=None, description='"ncu": also Nsight Compute\'s speed-of-light figures of one replay (GPU only).')
    confirm: bool = Field(default=True, description="Re-grade a pass with an implausible speedup once before it counts (gym.grading.confirm).")
    confirm_threshold: ConfirmThreshold | None = Field(
        default=None, description="When a pass is re-graded and what it must reach (None: gym.grading.confirm.DEFAULT_THRESHOLD)."
    )
