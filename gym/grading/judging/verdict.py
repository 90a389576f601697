"""The verdict being built for one grade: the worst status so far, its error text, integrity flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gym.grading.judging.integrity import Violation
from gym.schema.result import Status, TrialResult
from gym.worker.traffic import TrafficCounts
from gym.worker.witness_protocol import KernelRun


@dataclass
class WitnessFigures:
    """What the witness measured beside its checks, for the grade's training signal (never its verdict)."""

    # The trial whose replay was counted (a hidden one the secret picks, else a public one), its shape and dtype.
    label: str = ""
    shape: dict[str, int] = field(default_factory=dict)
    dtype: Any = None
    # The counted replay's traffic (gym.worker.traffic), or why there is none.
    traffic: TrafficCounts | None = None
    traffic_error: str | None = None
    # The counted trial's fresh inputs (the reference's eager ops are modelled on the same ones).
    inputs: dict[str, Any] = field(default_factory=dict)
    # GPU: the device kernels of one profiled replay, and the jit functions the tape launched.
    kernels: list[KernelRun] = field(default_factory=list)
    launched: list[str] = field(default_factory=list)
    # `profile="ncu"` on a GPU: (memory %, compute %, note) of Nsight Compute's speed-of-light section.
    ncu: tuple[float | None, float | None, str | None] | None = None


@dataclass
class Verdict:
    status: Status = Status.passed
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    trials: list[TrialResult] = field(default_factory=list)
    # Torch compute ops the task allows (anchors) that ran in the candidate's calls, summed.
    torch_ops: dict[str, int] = field(default_factory=dict)
    # Triton launches in the candidate's calls, summed.
    launches: int = 0
    # The witness's traffic count and kernel profile (first job only).
    figures: WitnessFigures | None = None

    def count_work(self, torch_ops: dict[str, int], launches: int) -> None:
        for name, count in torch_ops.items():
            self.torch_ops[name] = self.torch_ops.get(name, 0) + count
        self.launches += launches

    def worsen(self, status: Status, error: str | None = None) -> None:
        """Keep the most severe status (and the first error text at that level)."""
        if SEVERITY[status] > SEVERITY[self.status]:
            self.status, self.error = status, error


# Which status wins when several apply. A broken integrity rule outranks the
# crash or timeout it may have caused: the rule names what happened.
SEVERITY: dict[Status, int] = {
    Status.passed: 0,
    Status.wrong_answer: 1,
    Status.runtime_error: 2,
    Status.timeout: 3,
    Status.compile_error: 4,
    Status.rejected: 5,
    Status.infra_error: 6,
}


def flag(verdict: Verdict, violations: list[Violation]) -> None:
    for violation in violations:
        if violation.flag not in verdict.flags:
            verdict.flags.append(violation.flag)
        verdict.worsen(Status.rejected, violation.message)
