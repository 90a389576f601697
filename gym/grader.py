"""Grade one submission for one task: plan trials, run the worker in a sandbox,
read its records back defensively, judge them under the contract.

`grade()` never raises for anything the submission does: every failure ends
in a `GradeResult` with a precise status.
"""

from __future__ import annotations

import hashlib
import platform
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError

from gym.audit import audit_source
from gym.contracts import CheckOutcome
from gym.dtypes import dtype_name
from gym.feedback import write_feedback
from gym.inputs import new_secret
from gym.integrity import (
    Violation,
    call_violations,
    forged_files,
    report_violations,
    unexpected_files,
)
from gym.references import reference_fn
from gym.result import (
    Environment,
    GradeResult,
    Status,
    Timings,
    TimingSummary,
    TrialResult,
)
from gym.sandbox import (
    DEFAULT_SANDBOX,
    Job,
    Limits,
    RunOutcome,
    SandboxUnavailable,
    get_sandbox,
    stage_worker,
)
from gym.speed_of_light import bound_seconds
from gym.task_loader import TaskLoadError, find_task
from gym.task_model import Task
from gym.tensor_io import TensorReadError, read_tensor, write_tensor
from gym.timing import summarize, time_each
from gym.trials import (
    CallPlan,
    Trial,
    call_args,
    clone_args,
    judge_timed,
    judge_trial,
    plan_trials,
    timed_trial,
)
from gym.wire import (
    Arg,
    CallRecord,
    CallRequest,
    OutputRecord,
    WorkerReport,
    WorkerRequest,
)
from gym.worker import CURRENT_CALL_FILE, FORGERY_EXIT, REPORT_FILE, REQUEST_FILE

COMPILE_ERROR_TYPES = frozenset({"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"})
MAX_RECORD_BYTES = 1 << 20


class GradeFailure(Exception):
    """Ends the grade early with `status`; `message` is the error text."""

    def __init__(self, status: Status, message: str, flags: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.flags = flags or []


@dataclass
class Verdict:
    status: Status = Status.passed
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    trials: list[TrialResult] = field(default_factory=list)

    def worsen(self, status: Status, error: str | None = None) -> None:
        """Keep the most severe status (and the first error text at that level)."""
        if SEVERITY[status] > SEVERITY[self.status]:
            self.status, self.error = status, error


SEVERITY: dict[Status, int] = {
    Status.passed: 0,
    Status.wrong_answer: 1,
    Status.rejected: 2,
    Status.runtime_error: 3,
    Status.timeout: 4,
    Status.compile_error: 5,
    Status.infra_error: 6,
}


def default_device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def environment(device: torch.device, sandbox: str, report: WorkerReport | None) -> Environment:
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else None
    try:
        import triton

        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    return Environment(
        python=platform.python_version(),
        torch=torch.__version__,
        triton=(report.triton_version if report and report.triton_version else triton_version),
        platform=platform.platform(),
        device=device.type,
        gpu=gpu,
        driver=torch.version.cuda if device.type == "cuda" else None,
        sandbox=sandbox,
    )


# ---------------------------------------------------------------- job files


def _write_args(in_dir: Path, call_id: int, args: dict[str, Any], written: dict[int, list[Arg]]) -> list[Arg]:
    """Wire args for one call; identical arg dicts (repeats) share their files."""
    if id(args) in written:
        return written[id(args)]
    wire: list[Arg] = []
    for name, value in args.items():
        if isinstance(value, torch.Tensor):
            wire.append(Arg(name=name, tensor=write_tensor(in_dir, f"call{call_id}_{name}.bin", value)))
        else:
            wire.append(Arg(name=name, value=value))
    written[id(args)] = wire
    return wire


def write_job(job: Job, submission: Path, trials: list[Trial], shuffle_seed: int) -> list[tuple[Trial, list[int]]]:
    """Write the request and inputs; return each trial with its call ids.

    Call ids are a shuffled numbering and the worker runs calls in id order,
    so neither the order nor the id tells a correctness call from a timed one.
    """
    shutil.copyfile(submission, job.in_dir / "submission.py")
    stage_worker(job.lib_dir)
    plans = [(trial, plan) for trial in trials for plan in trial.calls]
    ids = list(range(len(plans)))
    random.Random(shuffle_seed).shuffle(ids)
    calls: list[CallRequest] = []
    written: dict[int, list[Arg]] = {}
    for call_id, (trial, plan) in zip(ids, plans):
        expected = plan.expected or expected_for_call(trial, plan)
        calls.append(
            CallRequest(
                id=call_id,
                args=_write_args(job.in_dir, call_id, plan.args, written),
                poison_bytes=[e.numel() * e.element_size() for e in expected],
            )
        )
    calls.sort(key=lambda call: call.id)
    request = WorkerRequest(submission="submission.py", device=job.device, calls=calls)
    (job.in_dir / REQUEST_FILE).write_text(request.model_dump_json())
    layout: list[tuple[Trial, list[int]]] = []
    position = 0
    for trial in trials:
        layout.append((trial, ids[position : position + len(trial.calls)]))
        position += len(trial.calls)
    return layout


# ---------------------------------------------------------------- reading back


def _read_model(path: Path, model: type[Any]) -> Any | None:
    """A record the worker wrote, or None when missing; GradeFailure when malformed."""
    if not path.is_file() or path.is_symlink():
        return None
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise GradeFailure(Status.runtime_error, f"worker record {path.name} is larger than {MAX_RECORD_BYTES} bytes")
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise GradeFailure(Status.runtime_error, f"worker record {path.name} is malformed: {error.error_count()} problem(s), first: {error.errors()[0]['msg']}") from None


def _died_message(outcome: RunOutcome, out_dir: Path) -> str:
    where = ""
    current = out_dir / CURRENT_CALL_FILE
    if current.is_file() and not current.is_symlink():
        where = f" during call {current.read_text()[:20]}"
    if outcome.limit_hit == "output":
        return f"the worker wrote more than the output limit{where} and was killed"
    if outcome.limit_hit == "memory":
        return f"the worker ran out of its memory limit{where} and was killed"
    if outcome.exit_code is not None and outcome.exit_code < 0:
        how = f"was killed by signal {-outcome.exit_code}"
    elif outcome.exit_code is not None and outcome.exit_code > 128:
        # Sandbox launchers report a child killed by signal N as status 128 + N.
        how = f"was killed by signal {outcome.exit_code - 128} (exit status {outcome.exit_code})"
    else:
        how = f"exited with status {outcome.exit_code}"
    tail = outcome.stderr_tail.strip()[-1500:]
    return f"the worker {how}{where} before finishing" + (f"; stderr tail:\n{tail}" if tail else "")


def expected_for_call(trial: Trial, plan: CallPlan) -> list[torch.Tensor]:
    if plan.expected is not None:
        return plan.expected
    if plan.span is None:
        return trial.expected
    start, stop = plan.span
    return [e[start:stop] for e in trial.expected]


def check_structure(record: CallRecord, trial: Trial, plan: CallPlan, device: torch.device) -> list[str]:
    """Problems with what the call returned, before any value is read."""
    expected = expected_for_call(trial, plan)
    wanted = "tuple" if trial.returns_tuple else "tensor"
    if record.container != wanted:
        what = f"a tuple of {len(expected)} tensors" if trial.returns_tuple else "a single torch.Tensor"
        return [f"returned {record.container}, expected {what}"]
    if len(record.outputs) != len(expected):
        return [f"returned {len(record.outputs)} outputs, expected {len(expected)}"]
    problems = []
    for index, (output, want) in enumerate(zip(record.outputs, expected)):
        label = f"output {index}" if trial.returns_tuple else "output"
        if output.dtype != dtype_name(want.dtype):
            problems.append(f"{label}: dtype {output.dtype}, expected {dtype_name(want.dtype)}")
        if output.shape != list(want.shape):
            problems.append(f"{label}: shape {output.shape}, expected {list(want.shape)}")
        if output.device != device.type:
            problems.append(f"{label}: on device {output.device}, expected {device.type}")
        if output.dense is False:
            problems.append(f"{label}: elements overlap or leave gaps (strides {output.strides}); return a dense tensor")
    return problems


def read_outputs(out_dir: Path, outputs: list[OutputRecord]) -> list[torch.Tensor]:
    tensors = []
    for output in outputs:
        if output.data is None:
            raise GradeFailure(Status.runtime_error, "the worker wrote no data for a tensor output")
        try:
            tensors.append(read_tensor(out_dir, output.data))
        except TensorReadError as error:
            raise GradeFailure(Status.runtime_error, f"malformed worker output: {error}") from None
    return tensors


def _failed_call_status(record: CallRecord) -> Status:
    return Status.compile_error if record.error_type in COMPILE_ERROR_TYPES else Status.runtime_error


def _flag(verdict: Verdict, violations: list[Violation]) -> None:
    for violation in violations:
        if violation.flag not in verdict.flags:
            verdict.flags.append(violation.flag)
        verdict.worsen(Status.rejected, violation.message)


def _running_call(out_dir: Path, labels: dict[int, str]) -> str:
    current = out_dir / CURRENT_CALL_FILE
    if current.is_file() and not current.is_symlink():
        text = current.read_text()[:20]
        if text.isdigit() and int(text) in labels:
            return labels[int(text)]
    return "an unknown call"


def _read_records(layout: list[tuple[Trial, list[int]]], job: Job, outcome: RunOutcome, verdict: Verdict) -> dict[int, CallRecord] | None:
    """Every call's record, or None after recording why some are missing or failed."""
    labels = {call_id: trial.label for trial, ids in layout for call_id in ids}
    records: dict[int, CallRecord] = {}
    for trial, ids in layout:
        for call_id in ids:
            record = _read_model(job.out_dir / f"call{call_id}.json", CallRecord)
            if record is None or record.id != call_id:
                running = _running_call(job.out_dir, labels)
                if outcome.timed_out:
                    message = f"the kernel ran past the {outcome.wall_s:.0f} s limit (killed during a call on {running})"
                    verdict.worsen(Status.timeout, message)
                else:
                    message = _died_message(outcome, job.out_dir)
                    verdict.worsen(Status.runtime_error, message)
                verdict.trials.append(_unjudged(trial, message))
                return None
            records[call_id] = record
    for trial, ids in layout:
        for call_id in ids:
            record = records[call_id]
            if not record.ok:
                verdict.worsen(_failed_call_status(record), f"{record.error_type}: {record.error}")
                verdict.trials.append(_unjudged(trial, f"the kernel raised {record.error_type}"))
                return None
    return records


def judge(
    layout: list[tuple[Trial, list[int]]], job: Job, outcome: RunOutcome, device: torch.device, allowed_extra: list[str]
) -> tuple[Verdict, WorkerReport | None, list[float]]:
    """The verdict on a finished worker run, and the seconds of its timed calls."""
    verdict = Verdict()
    report = _read_model(job.out_dir / REPORT_FILE, WorkerReport)
    if report is not None and report.import_error_type is not None:
        verdict.worsen(Status.compile_error, f"{report.import_error_type}: {report.import_error}")
        return verdict, report, []
    if report is not None:
        _flag(verdict, report_violations(report, allowed_extra))
    records = _read_records(layout, job, outcome, verdict)
    if records is None:
        return verdict, report, []
    written: set[str] = set()
    for record in records.values():
        written.add(f"call{record.id}.json")
        written.update(output.data.file for output in record.outputs if output.data is not None)
        _flag(verdict, call_violations(record, allowed_extra))
    _flag(verdict, unexpected_files(job.out_dir, written | {REPORT_FILE, CURRENT_CALL_FILE}))
    if report is not None:
        _flag(verdict, forged_files(job.out_dir, report, written))
    if outcome.exit_code == FORGERY_EXIT:
        _flag(verdict, [Violation("result_channel_forgery", "the worker found its report already written by someone else")])
    timed_seconds: list[float] = []
    for trial, ids in layout:
        outputs: list[list[torch.Tensor]] = []
        trial_error: str | None = None
        timed_failures: list[str] = []
        for plan, call_id in zip(trial.calls, ids):
            record = records[call_id]
            if any(not output.exact_tensor for output in record.outputs):
                trial_error = trial_error or "returned something other than torch.Tensor"
                break
            problems = check_structure(record, trial, plan, device)
            if problems:
                trial_error = trial_error or "; ".join(problems)
                verdict.worsen(Status.wrong_answer, "; ".join(problems))
                break
            try:
                tensors = read_outputs(job.out_dir, record.outputs)
            except GradeFailure as failure:
                verdict.worsen(failure.status, failure.message)
                verdict.trials.append(_unjudged(trial, failure.message))
                return verdict, report, []
            if plan.role == "timed":
                timed_seconds.append(record.seconds if record.seconds is not None else float("nan"))
                failed = [check for check in judge_timed(trial, plan, tensors) if not check.passed]
                if failed:
                    timed_failures.append(f"{failed[0].kind}: {failed[0].message}")
            outputs.append(tensors)
        if trial_error is not None:
            verdict.trials.append(_unjudged(trial, trial_error))
            continue
        checks = judge_trial(trial, outputs)
        result = _trial_result(trial, checks)
        if timed_failures:
            message = f"{len(timed_failures)} timed call(s) on fresh inputs of this shape returned wrong results, first: {timed_failures[0]}"
            result = result.model_copy(update={"passed": False, "error": message})
            verdict.worsen(Status.wrong_answer, f"{trial.label}: {message}")
        verdict.trials.append(result)
        for check in checks:
            if check.passed:
                continue
            if check.kind == "nontrivial":
                verdict.worsen(Status.infra_error, f"task self-check failed on {trial.label}: {check.message}")
            else:
                verdict.worsen(Status.wrong_answer, f"{check.kind} failed on {trial.label}: {check.message}")
    if report is None and verdict.status == Status.passed:
        verdict.worsen(Status.runtime_error, _died_message(outcome, job.out_dir))
    return verdict, report, timed_seconds


def _trial_result(trial: Trial, checks: list[CheckOutcome]) -> TrialResult:
    return TrialResult(
        label=trial.label,
        dtype=dtype_name(trial.dtype),
        shape=None if trial.hidden else dict(trial.shape),
        hidden=trial.hidden,
        passed=all(check.passed for check in checks),
        checks=checks,
    )


def _unjudged(trial: Trial, error: str) -> TrialResult:
    result = _trial_result(trial, [])
    return result.model_copy(update={"passed": False, "error": error})


# ---------------------------------------------------------------- timing


def reference_timing(task: Task, trial: Trial, device: torch.device) -> TimingSummary:
    """The reference timed like the candidate: on each timed call's inputs, synced on both ends."""
    reference = reference_fn(task)
    argsets = [plan.args for plan in trial.calls if plan.role == "timed"]
    samples = time_each(lambda args: reference(*call_args(args, task.spec.params)), [clone_args(a) for a in argsets], device)
    return TimingSummary(**summarize(samples))


def build_timings(task: Task, trial: Trial, seconds: list[float], device: torch.device) -> Timings:
    timings = Timings(device=device.type if device.type == "cpu" else torch.cuda.get_device_name(), interpreted=device.type == "cpu", trial=trial.label)
    samples = [value for value in seconds if value >= 0]
    if not samples:
        timings.note = "the candidate was not timed"
        return timings
    timings.candidate = TimingSummary(**summarize(samples))
    timings.reference = reference_timing(task, trial, device)
    return timings


# ---------------------------------------------------------------- entry point


def grade(
    task: Task | str,
    submission: Path | str,
    *,
    sandbox: str = DEFAULT_SANDBOX,
    device: torch.device | str | None = None,
    secret: int | None = None,
    include_hidden: bool = True,
    timing_reps: int | None = None,
    timeout_s: float | None = None,
    keep_job: Path | None = None,
    limits: Limits | None = None,
    audit: bool = True,
    bench: bool = False,
) -> GradeResult:
    """Grade `submission` (a Python file defining `kernel`) against `task`.

    `secret` is mixed into every trial's seed (a fresh one per call when
    omitted); `keep_job` copies the job folder there for debugging; `limits`
    overrides the sandbox's resource limits; `audit=False` skips the static
    audit (to prove the runtime defences hold on their own); `bench` times the
    task's first benchmark shape instead of its first public shape (GPU).
    """
    started = time.monotonic()
    submission = Path(submission)
    device = torch.device(device) if device is not None else default_device()
    digest = hashlib.sha256(submission.read_bytes()).hexdigest() if submission.is_file() else ""
    task_id = task if isinstance(task, str) else task.id
    reps = timing_reps if timing_reps is not None else (3 if device.type == "cpu" else 20)
    report: WorkerReport | None = None
    layout: list[tuple[Trial, list[int]]] = []
    verdict = Verdict()
    task_version = 0
    try:
        if isinstance(task, str):
            task = find_task(task)
        task_version = task.spec.version
        if not submission.is_file():
            raise GradeFailure(Status.compile_error, f"submission file {submission} does not exist")
        if audit:
            findings = audit_source(submission.read_text(errors="replace"))
            if findings:
                raise GradeFailure(
                    Status.rejected,
                    "the static audit refused the submission: " + "; ".join(f"line {f.line}: {f.message}" for f in findings),
                    flags=list(dict.fromkeys(f"audit:{f.rule}" for f in findings)),
                )
        runner = get_sandbox(sandbox)
        secret = new_secret() if secret is None else secret
        try:
            trials = plan_trials(task, device, secret, include_hidden, gpu=device.type == "cuda", timing_reps=reps, bench=bench)
        except Exception as error:  # noqa: BLE001 - a broken task is the gym's failure
            raise GradeFailure(Status.infra_error, f"could not prepare trials: {type(error).__name__}: {error}") from error
        with tempfile.TemporaryDirectory(prefix="kgym-job-") as tmp:
            job = Job(
                in_dir=Path(tmp) / "in", out_dir=Path(tmp) / "out", scratch_dir=Path(tmp) / "scratch",
                device=device.type, limits=limits or Limits(),
            )
            for folder in (job.in_dir, job.out_dir, job.scratch_dir):
                folder.mkdir()
            layout = write_job(job, submission, trials, shuffle_seed=secret)
            outcome = runner.run(job, timeout_s if timeout_s is not None else task.spec.timeout_s)
            verdict, report, timed_seconds = judge(layout, job, outcome, device, task.spec.allowed_torch)
            if keep_job is not None:
                shutil.copytree(tmp, keep_job, dirs_exist_ok=True)
    except GradeFailure as failure:
        verdict.worsen(failure.status, failure.message)
        verdict.flags.extend(failure.flags)
    except (TaskLoadError, SandboxUnavailable) as error:
        verdict.worsen(Status.infra_error, str(error))
    except Exception as error:  # noqa: BLE001 - the gym's own failure, reported not raised
        verdict.worsen(Status.infra_error, f"{type(error).__name__}: {error}")
    timings = None
    speedup = None
    sol_fraction = None
    if verdict.status == Status.passed and isinstance(task, Task) and layout:
        trial = timed_trial([trial for trial, _ in layout]) or layout[0][0]
        timings = build_timings(task, trial, timed_seconds, device)
        if timings.candidate and timings.reference and timings.candidate.median_s > 0:
            speedup = timings.reference.median_s / timings.candidate.median_s
        if timings.candidate and not timings.interpreted:
            bound = bound_seconds(task, trial.shape, trial.dtype, timings.device)
            if bound is not None:
                sol_fraction = bound / timings.candidate.median_s
                if timings.candidate.median_s < bound:
                    _flag(verdict, [Violation(
                        "below_speed_of_light",
                        f"measured {timings.candidate.median_s * 1e6:.2f} us, below the {bound * 1e6:.2f} us this "
                        f"{timings.device} needs at best: the timing cannot be real",
                    )])
                    speedup = None
    result = GradeResult(
        task_id=task_id,
        task_version=task_version,
        submission_sha256=digest,
        status=verdict.status,
        trials=verdict.trials,
        timings=timings,
        speedup_vs_eager=speedup,
        sol_fraction=sol_fraction,
        integrity_flags=verdict.flags,
        environment=environment(device, sandbox, report),
        feedback="",
        error=verdict.error,
        graded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=time.monotonic() - started,
    )
    return result.model_copy(update={"feedback": write_feedback(result)})
