"""Synthetic run folders for the leaderboard tests and the README screenshot.

Written with the run folder's own writers and realistic GradeResult objects
(trials, diagnostics, timings, environment), so no kernel is ever graded.

`standard_runs(root)` writes:
- `gpu-openai`: agent openai, model gpt-kernel-1, NVIDIA H200: softmax fails
  then passes (with a transcript), vector_add passes, rms_norm is rejected,
  and a task that no longer exists (l1/retired_op) passes.
- `gpu-solutions`: agent solutions, NVIDIA H200: three passes.
- `cpu-solutions`: agent solutions, interpreted on CPU: one pass, one compile error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gym.contracts.base import CheckOutcome, Diagnostics, WorstElement
from gym.harness.run_folder import (
    AttemptLine,
    ResultsLog,
    RunConfig,
    RunManifest,
    write_attempt,
    write_manifest,
)
from gym.schema.result import (
    Environment,
    GradeResult,
    Status,
    Timings,
    TimingSummary,
    TrialResult,
)

H200 = "NVIDIA H200"

GPU_ENV = Environment(
    python="3.11.9",
    torch="2.13.0",
    triton="3.7.1",
    platform="Linux-6.8.0-x86_64-with-glibc2.36",
    device="cuda",
    gpu=H200,
    driver="570.86.15",
    sandbox="bwrap",
)
CPU_ENV = Environment(
    python="3.11.9",
    torch="2.13.0",
    triton="3.7.1",
    platform="Linux-6.8.0-x86_64-with-glibc2.36",
    device="cpu",
    gpu=None,
    driver=None,
    sandbox="bwrap",
)

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    out = torch.empty_like(x)
    m, n = x.shape
    _softmax[(m,)](x, out, n, BLOCK=triton.next_power_of_2(n))
    return out
"""

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You write Triton kernels."},
    {"role": "user", "content": "# l1/softmax (version 1): Row softmax\n..."},
    {"role": "assistant", "content": "```python\n" + KERNEL + "```"},
    {"role": "tool", "name": "grade", "content": "wrong_answer: the last 56 column(s) of each row are wrong"},
]


def summary(median_s: float, reps: int = 20) -> TimingSummary:
    return TimingSummary(
        median_s=median_s,
        mean_s=median_s * 1.04,
        p10_s=median_s * 0.97,
        p90_s=median_s * 1.12,
        min_s=median_s * 0.95,
        rse=0.012,
        reps=reps,
    )


def passing_trials(kind: str = "allclose") -> list[TrialResult]:
    def ok(figure: float) -> list[CheckOutcome]:
        return [
            CheckOutcome(kind=kind, passed=True, figure=figure, threshold=1.0, message=f"worst error is {figure:.3g} of the allowance"),
            CheckOutcome(kind="nontrivial", passed=True, message="no trivial answer passes the value checks"),
        ]

    return [
        TrialResult(label="float32 public #1", dtype="float32", shape={"M": 32, "N": 200}, hidden=False, passed=True, checks=ok(0.031)),
        TrialResult(label="float32 public #2", dtype="float32", shape={"M": 16, "N": 1024}, hidden=False, passed=True, checks=ok(0.044)),
        TrialResult(label="float32 hidden", dtype="float32", shape=None, hidden=True, passed=True, checks=ok(0.029)),
    ]


def failing_trials() -> list[TrialResult]:
    diagnostics = Diagnostics(
        output=0,
        elements=6400,
        mismatched=1792,
        max_abs_error=0.0123,
        mean_abs_error=0.0009,
        max_rel_error=1.0,
        worst=[
            WorstElement(index=[3, 199], got=0.0, expected=0.0123, error=0.0123),
            WorstElement(index=[7, 198], got=0.0, expected=0.0119, error=0.0119),
        ],
        pattern="mismatches are confined to the last 56 column(s) of each row (an unmasked or short tail along the last dimension)",
    )
    bad = CheckOutcome(
        kind="allclose",
        passed=False,
        figure=1.23e5,
        threshold=1.0,
        message="1792 of 6400 elements exceed atol + rtol * |expected|",
        diagnostics=[diagnostics],
    )
    return [
        TrialResult(label="float32 public #1", dtype="float32", shape={"M": 32, "N": 200}, hidden=False, passed=False, checks=[bad]),
        TrialResult(label="float32 hidden", dtype="float32", shape=None, hidden=True, passed=False, checks=[bad]),
    ]


def make_grade(
    task_id: str,
    status: Status,
    *,
    interpreted: bool = False,
    eager: float | None = None,
    compile: float | None = None,
    sol: float | None = None,
    flags: list[str] | None = None,
    task_version: int = 1,
    sha: str = "a",
    timed: bool = True,
) -> GradeResult:
    """A realistic grade: trials that match the status, timings that match the speedups."""
    environment = CPU_ENV if interpreted else GPU_ENV
    trials = passing_trials() if status == Status.passed else failing_trials() if status == Status.wrong_answer else []
    timings = None
    if timed:
        kernel_s = 2.0e-3 if interpreted else 2.0e-5
        timings = Timings(
            device="cpu" if interpreted else H200,
            interpreted=interpreted,
            trial="float32 public #1",
            candidate=summary(kernel_s, reps=3 if interpreted else 20),
            reference=summary(kernel_s * eager, reps=3 if interpreted else 20) if eager else None,
            compiled=summary(kernel_s * compile) if compile else None,
            compiled_note="torch.compile is not timed under the interpreter" if interpreted else None,
        )
    feedback = {
        Status.passed: "Passed every check on every trial.",
        Status.wrong_answer: "allclose failed on float32 public #1: the last 56 columns of each row are wrong (an unmasked tail?).",
        Status.rejected: "Rejected: the kernel wrote into its input x.",
        Status.compile_error: "The file does not import: SyntaxError on line 3.",
    }.get(status, status.value)
    return GradeResult(
        task_id=task_id,
        task_version=task_version,
        submission_sha256=(sha * 64)[:64],
        status=status,
        trials=trials,
        timings=timings,
        speedup_vs_eager=eager if status == Status.passed or status == Status.wrong_answer else None,
        speedup_vs_compile=compile,
        sol_fraction=sol,
        integrity_flags=flags or [],
        environment=environment,
        feedback=feedback,
        error="SyntaxError: invalid syntax (submission.py, line 3)" if status == Status.compile_error else None,
        graded_at="2026-11-20T10:00:00+00:00",
        duration_s=4.2,
    )


@dataclass
class Attempt:
    task_id: str
    grade: GradeResult
    code: str = KERNEL
    transcript: list[dict[str, Any]] | None = None
    episode_done: bool = True


@dataclass
class RunSpec:
    run_id: str
    agent: str
    model: str | None
    device: str
    attempts: list[Attempt]
    started_at: str = "2026-11-20T09:00:00+00:00"
    ended_at: str | None = "2026-11-20T11:00:00+00:00"
    tasks: list[str] = field(default_factory=list)


def write_run(folder: Path, spec: RunSpec) -> Path:
    """Write a run folder (run.json, results.jsonl, attempts/...) the way `kgym run` does."""
    folder.mkdir(parents=True, exist_ok=True)
    tasks = spec.tasks or sorted({attempt.task_id for attempt in spec.attempts})
    environment = CPU_ENV if spec.device == "cpu" else GPU_ENV
    manifest = RunManifest(
        run_id=spec.run_id,
        config=RunConfig(agent=spec.agent, model=spec.model, suite="l1", tasks=tasks, attempts=3, sandbox="bwrap", device=spec.device),
        environment=environment,
        task_versions={task: 1 for task in tasks},
        gym_version="0.1.0",
        started_at=spec.started_at,
        ended_at=spec.ended_at,
    )
    write_manifest(folder, manifest)
    log = ResultsLog(folder)
    numbers: dict[str, int] = {}
    for attempt in spec.attempts:
        number = numbers[attempt.task_id] = numbers.get(attempt.task_id, 0) + 1
        path = write_attempt(folder, attempt.task_id, number, attempt.code, attempt.grade, attempt.transcript)
        grade = attempt.grade
        log.append(
            AttemptLine(
                task_id=attempt.task_id,
                task_version=grade.task_version,
                attempt=number,
                status=grade.status,
                reward=1.0 if grade.status == Status.passed else 0.0,
                speedup_vs_eager=grade.speedup_vs_eager,
                speedup_vs_compile=grade.speedup_vs_compile,
                sol_fraction=grade.sol_fraction,
                interpreted=grade.timings.interpreted if grade.timings else None,
                integrity_flags=grade.integrity_flags,
                submission_sha256=grade.submission_sha256,
                path=path,
                episode_done=attempt.episode_done,
                graded_at=grade.graded_at,
                duration_s=grade.duration_s,
            )
        )
    return folder


def gpu_openai_spec() -> RunSpec:
    return RunSpec(
        run_id="gpu-openai",
        agent="openai",
        model="gpt-kernel-1",
        device="cuda",
        attempts=[
            Attempt("l1/softmax", make_grade("l1/softmax", Status.wrong_answer, eager=5.0, sha="1"), episode_done=False),
            Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, eager=2.4, compile=1.3, sol=0.62, sha="2"), transcript=TRANSCRIPT),
            Attempt("l1/vector_add", make_grade("l1/vector_add", Status.passed, eager=1.1, compile=0.9, sol=0.81, sha="3")),
            Attempt(
                "l1/rms_norm",
                make_grade("l1/rms_norm", Status.rejected, flags=["input_mutated:x"], sha="4"),
                code="def kernel(x):\n    x.mul_(2)\n    return x\n",
            ),
            Attempt("l1/retired_op", make_grade("l1/retired_op", Status.passed, eager=3.0, sol=0.4, sha="5")),
        ],
    )


def gpu_solutions_spec() -> RunSpec:
    return RunSpec(
        run_id="gpu-solutions",
        agent="solutions",
        model=None,
        device="cuda",
        started_at="2026-11-18T08:00:00+00:00",
        ended_at="2026-11-18T08:30:00+00:00",
        attempts=[
            Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, eager=1.6, compile=1.05, sol=0.5, sha="6")),
            Attempt("l1/vector_add", make_grade("l1/vector_add", Status.passed, eager=0.9, compile=0.95, sol=0.7, sha="7")),
            Attempt("l1/rms_norm", make_grade("l1/rms_norm", Status.passed, eager=2.1, compile=1.2, sol=0.55, sha="8")),
        ],
    )


def cpu_solutions_spec() -> RunSpec:
    return RunSpec(
        run_id="cpu-solutions",
        agent="solutions",
        model=None,
        device="cpu",
        started_at="2026-11-19T07:00:00+00:00",
        ended_at="2026-11-19T07:10:00+00:00",
        attempts=[
            Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, interpreted=True, eager=0.02, sha="9")),
            Attempt("l1/vector_add", make_grade("l1/vector_add", Status.compile_error, interpreted=True, timed=False, sha="b"), code="def kernel(x, y:\n"),
        ],
    )


def standard_runs(root: Path) -> list[Path]:
    """The three runs described in the module docstring, under `root`."""
    return [
        write_run(root / "gpu-openai", gpu_openai_spec()),
        write_run(root / "gpu-solutions", gpu_solutions_spec()),
        write_run(root / "cpu-solutions", cpu_solutions_spec()),
    ]
