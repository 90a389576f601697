"""Judge a finished worker run: records, integrity rules, structure, then the contract.

`judge()` reads the job's output folder defensively and returns a `JobVerdict`;
`judge_trial` / `judge_timed` evaluate the contract's checks on the outputs of
one trial or one timed call. A failing check's status follows its `blame`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from gym.contracts import CheckOutcome, SubBatchRun, TrialEvidence
from gym.errors import GradeFailure
from gym.grading.judging.integrity import (
    Violation,
    call_violations,
    forged_files,
    op_violations,
    report_violations,
    unexpected_files,
)
from gym.grading.judging.stages import split_stage_form, stage_note
from gym.grading.judging.verdict import Verdict, flag
from gym.grading.planning.plan import CallPlan, Trial, expected_for_call
from gym.grading.running.job_files import on_device_of, read_model, read_outputs
from gym.sandbox import Job, RunOutcome
from gym.schema.result import Status, TrialResult
from gym.worker.dtypes import dtype_name
from gym.worker.protocol import CURRENT_CALL_FILE, REPORT_FILE, WORKER_CUDA_DEVICE, CallRecord, ExitCode, WorkerReport, call_record_file
from gym.worker.torch_policy import PLUMBING_OPS


@dataclass
class JobVerdict:
    """The judgement of one sandboxed job."""

    # Status, error text, integrity flags and per-trial results so far.
    verdict: Verdict
    # The worker's final report, when it wrote a valid one.
    report: WorkerReport | None = None
    # Candidate seconds of each timed call, in call order (empty unless every call was judged).
    timed_seconds: list[float] = field(default_factory=list)
    # The same seconds by trial label, in each trial's call order.
    timed_by_trial: dict[str, list[float]] = field(default_factory=dict)
    # The same seconds by call id (the replay's time floor compares each with its own kernels).
    seconds_by_call: dict[int, float] = field(default_factory=dict)


# Which status a failing check's blame maps to.
BLAME_STATUS: dict[str, Status] = {"submission": Status.wrong_answer, "task": Status.infra_error}


def judge_timed(trial: Trial, plan: CallPlan, outputs: list[torch.Tensor]) -> list[CheckOutcome]:
    """The contract's value checks on one timed (or late) call, against that call's own expected outputs."""
    expected = expected_for_call(trial, plan)
    oracle = plan.oracle if plan.expected is not None else trial.oracle
    evidence = TrialEvidence(outputs=outputs, expected=expected, inputs=plan.args, oracle=oracle, brief=True)
    return [check.compare(outputs, evidence) for check in trial.checks if check.compares_values]


# Calls judged one by one against their own expected outputs (judge_timed), not by the trial's checks.
PER_CALL_ROLES = frozenset({"timed", "late"})


def judge_trial(trial: Trial, outputs: list[list[torch.Tensor]]) -> list[CheckOutcome]:
    """Run the trial's checks on the outputs of its other calls (in `trial.calls` order, PER_CALL_ROLES left out)."""
    calls = [plan for plan in trial.calls if plan.role not in PER_CALL_ROLES]
    evidence = TrialEvidence(
        outputs=outputs[0],
        expected=trial.expected,
        inputs=trial.inputs,
        oracle=trial.oracle,
        repeats=[out for plan, out in zip(calls, outputs) if plan.role == "repeat"],
        sub_batches=[
            SubBatchRun(start=plan.span[0], stop=plan.span[1], outputs=out)
            for plan, out in zip(calls, outputs)
            if plan.role == "sub_batch" and plan.span is not None
        ],
        value_checks=[check for check in trial.checks if check.compares_values],
    )
    return [check.evaluate(evidence) for check in trial.checks]


COMPILE_ERROR_TYPES = frozenset({"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"})


def _current_call_marker(out_dir: Path) -> str | None:
    """The worker's current-call marker, read defensively (at most 20 bytes, any bytes)."""
    current = out_dir / CURRENT_CALL_FILE
    if not current.is_file() or current.is_symlink():
        return None
    with current.open("rb") as handle:
        return handle.read(20).decode("utf-8", errors="replace")


def _died_message(outcome: RunOutcome, out_dir: Path) -> str:
    marker = _current_call_marker(out_dir)
    where = f" during call {marker}" if marker is not None else ""
    if outcome.limit_hit == "output":
        return f"the worker wrote more than the output limit{where} and was killed"
    if outcome.limit_hit == "memory":
        return f"the worker ran out of its memory limit{where} and was killed"
    if outcome.limit_hit == "triton_cache":
        return f"the worker filled its Triton cache past the scratch limit{where} and was killed"
    if outcome.exit_code is not None and outcome.exit_code < 0:
        how = f"was killed by signal {-outcome.exit_code}"
    elif outcome.exit_code is not None and outcome.exit_code > 128:
        # Sandbox launchers report a child killed by signal N as status 128 + N.
        how = f"was killed by signal {outcome.exit_code - 128} (exit status {outcome.exit_code})"
    else:
        how = f"exited with status {outcome.exit_code}"
    tail = outcome.stderr_tail.strip()[-1500:]
    return f"the worker {how}{where} before finishing" + (f"; stderr tail:\n{tail}" if tail else "")


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
        elif device.type == "cuda" and f"cuda:{output.device_index}" != WORKER_CUDA_DEVICE:
            problems.append(f"{label}: on cuda:{output.device_index}, expected the grade's GPU (the sandbox's {WORKER_CUDA_DEVICE})")
        if output.dense is False:
            problems.append(f"{label}: elements overlap or leave gaps (strides {output.strides}); return a dense tensor")
    return problems


def _failed_call_status(record: CallRecord) -> Status:
    return Status.compile_error if record.error_type in COMPILE_ERROR_TYPES else Status.runtime_error


def _running_call(out_dir: Path, labels: dict[int, str]) -> str:
    text = _current_call_marker(out_dir) or ""
    if text.isdigit() and int(text) in labels:
        return labels[int(text)]
    return "an unknown call"


def _read_records(
    layout: list[tuple[Trial, list[int]]], job: Job, outcome: RunOutcome, verdict: Verdict, allowed_extra: list[str]
) -> dict[int, CallRecord] | None:
    """Every call's record, or None after recording why some are missing or failed."""
    labels = {call_id: trial.label for trial, ids in layout for call_id in ids}
    found: dict[int, CallRecord | None] = {}
    for _, ids in layout:
        for call_id in ids:
            record = read_model(job.out_dir / call_record_file(call_id), CallRecord)
            found[call_id] = record if record is not None and record.id == call_id else None
    # The worker stops after the first call that raises: that call's error is the verdict, not the missing rest.
    for trial, ids in layout:
        for call_id in ids:
            record = found[call_id]
            if record is not None and not record.ok:
                verdict.worsen(_failed_call_status(record), f"{record.error_type}: {record.error}")
                flag(verdict, op_violations(record, allowed_extra))
                verdict.trials.append(_unjudged(trial, f"the kernel raised {record.error_type}"))
                return None
    records: dict[int, CallRecord] = {}
    for trial, ids in layout:
        for call_id in ids:
            record = found[call_id]
            if record is None:
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
    return records


def judge(
    layout: list[tuple[Trial, list[int]]],
    job: Job,
    outcome: RunOutcome,
    device: torch.device,
    allowed_extra: list[str],
    also_expected: frozenset[str] = frozenset(),
) -> JobVerdict:
    """The verdict on a finished worker run, its report, and the seconds of its timed calls.
    `also_expected`: further names the output folder may hold (the tapes, the witness's folder)."""
    verdict = Verdict()
    if outcome.infra_failure is not None:
        # The sandbox failed before the worker started: nothing submitted ran, the gym is to blame.
        verdict.worsen(Status.infra_error, outcome.infra_failure)
        return JobVerdict(verdict, None)
    if outcome.exit_code == ExitCode.forgery:
        # The report was planted: nothing in it is read, let alone believed.
        flag(verdict, [Violation("result_channel_forgery", "the worker found its report already written by someone else")])
        return JobVerdict(verdict, None)
    report = read_model(job.out_dir / REPORT_FILE, WorkerReport)
    if report is not None and report.import_error_type is not None:
        verdict.worsen(Status.compile_error, f"{report.import_error_type}: {report.import_error}")
        # What the import asked for and was refused (a forbidden import, a file opened) outranks the error it caused.
        flag(verdict, report_violations(report, allowed_extra))
        return JobVerdict(verdict, report)
    if report is not None:
        flag(verdict, report_violations(report, allowed_extra))
    records = _read_records(layout, job, outcome, verdict, allowed_extra)
    if records is None:
        return JobVerdict(verdict, report)
    written: set[str] = set()
    for record in records.values():
        written.add(call_record_file(record.id))
        written.update(output.data.file for output in record.outputs if output.data is not None)
        flag(verdict, call_violations(record, allowed_extra))
        verdict.count_work({op: count for op, count in record.torch_ops.items() if op not in PLUMBING_OPS}, sum(record.launches.values()))
    flag(verdict, unexpected_files(job.out_dir, written | also_expected | {REPORT_FILE, CURRENT_CALL_FILE}))
    if report is not None:
        flag(verdict, forged_files(job.out_dir, report, written))
    timed_seconds: list[float] = []
    timed_by_trial: dict[str, list[float]] = {}
    seconds_by_call: dict[int, float] = {}
    for trial, ids in layout:
        outputs: list[list[torch.Tensor]] = []
        trial_error: str | None = None
        timed_failures: list[tuple[str, str]] = []
        stage_tensors: list[torch.Tensor] | None = None
        for plan, call_id in zip(trial.calls, ids):
            # A block task's submission may return its stages after its outputs (gym.grading.judging.stages).
            record, stage_records = split_stage_form(records[call_id], len(expected_for_call(trial, plan)), trial.returns_tuple, len(trial.stage_names))
            if any(not output.exact_tensor for output in record.outputs):
                trial_error = trial_error or "returned something other than torch.Tensor"
                break
            problems = check_structure(record, trial, plan, device)
            if problems:
                trial_error = trial_error or "; ".join(problems)
                verdict.worsen(Status.wrong_answer, "; ".join(problems))
                break
            try:
                tensors = on_device_of(read_outputs(job.out_dir, record.outputs), expected_for_call(trial, plan))
            except GradeFailure as failure:
                verdict.worsen(failure.status, failure.message)
                verdict.trials.append(_unjudged(trial, failure.message))
                return JobVerdict(verdict, report)
            if plan.role == "main" and stage_records and all(output.exact_tensor for output in stage_records):
                try:
                    stage_tensors = read_outputs(job.out_dir, stage_records)
                except GradeFailure:
                    stage_tensors = None  # the stages only inform the feedback: unreadable ones are left out
            if plan.role == "timed":
                seconds = record.seconds if record.seconds is not None else float("nan")
                timed_seconds.append(seconds)
                timed_by_trial.setdefault(trial.label, []).append(seconds)
                seconds_by_call[call_id] = seconds
            if plan.role in PER_CALL_ROLES:
                failed = [check for check in judge_timed(trial, plan, tensors) if not check.passed]
                if failed:
                    what = "timed call(s) on fresh inputs" if plan.role == "timed" else "later call(s) on this trial's own inputs"
                    timed_failures.append((what, f"{failed[0].kind}: {failed[0].message}"))
                continue
            outputs.append(tensors)
        if trial_error is not None:
            verdict.trials.append(_unjudged(trial, trial_error))
            continue
        timing_only = all(plan.role in PER_CALL_ROLES for plan in trial.calls)
        checks = [] if timing_only else judge_trial(trial, outputs)
        result = _trial_result(trial, checks)
        note = ""
        values_failed = bool(timed_failures) or any(not item.passed and check.compares_values for check, item in zip(trial.checks, checks))
        if trial.stage_names and trial.stages is not None and values_failed:
            # A block task: which stage of the main call first went outside the bound (or how to find out).
            note = "; " + stage_note(trial.stage_names, stage_tensors, trial.stages, trial.stage_rtol)
        if timed_failures:
            message = f"{len(timed_failures)} {timed_failures[0][0]} of this shape returned wrong results, first: {timed_failures[0][1]}{note}"
            result = result.model_copy(update={"passed": False, "error": message})
            verdict.worsen(Status.wrong_answer, f"{trial.label}: {message}")
        elif note:
            result = result.model_copy(update={"error": note.removeprefix("; ")})
        verdict.trials.append(result)
        for check, check_outcome in zip(trial.checks, checks):
            if check_outcome.passed:
                continue
            if check.blame == "task":
                verdict.worsen(BLAME_STATUS[check.blame], f"task self-check failed on {trial.label}: {check_outcome.message}")
            else:
                verdict.worsen(
                    BLAME_STATUS[check.blame], f"{check_outcome.kind} failed on {trial.label}: {check_outcome.message}{note if check.compares_values else ''}"
                )
    if report is None and verdict.status == Status.passed:
        if outcome.timed_out:
            # Every call returned, but the final re-check (after a device-wide sync) never finished.
            verdict.worsen(Status.timeout, f"the kernel ran past the {outcome.wall_s:.0f} s limit after its last call (work still running at the final sync)")
        else:
            verdict.worsen(Status.runtime_error, _died_message(outcome, job.out_dir))
    return JobVerdict(verdict, report, timed_seconds, timed_by_trial, seconds_by_call)


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
