"""The judge on hand-written worker records: no sandbox, no worker process.

Each test writes a real job folder with `write_job`, then writes what the worker
would have written (records, output tensors, report) by hand, and judges it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import torch

from gym.errors import GradeFailure
from gym.grading.judging.judge import JobVerdict, judge
from gym.grading.planning.plan import CallPlan, TimingRequest, Trial, expected_for_call, plan_calls, plan_timed_calls, plan_trials
from gym.grading.running.job_files import JobCalls, JobContents, write_job
from gym.sandbox import Job, RunOutcome
from gym.schema.result import Status
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from gym.worker.protocol import (
    CURRENT_CALL_FILE,
    REPORT_FILE,
    CallRecord,
    ExitCode,
    OutputRecord,
    call_record_file,
)
from tests.support.worker_records import (
    LAUNCHES,
    FakeWorker,
    call_id_of,
    call_ids,
    make_job,
    outcome,
)

CPU = torch.device("cpu")
SECRET = 12345


@pytest.fixture(scope="module")
def vector_add() -> Task:
    return find_task("l1/vector_add")


@pytest.fixture(scope="module")
def add_trials(vector_add: Task) -> list[Trial]:
    # Four trials (two public, two hidden); the first also carries two timed calls.
    return plan_trials(vector_add, CPU, SECRET, timing=TimingRequest(reps=2))


@dataclasses.dataclass
class Bench:
    """A written job folder, its layout, and a fake worker to fill its output folder."""

    job: Job
    layout: list[tuple[Trial, list[int]]]
    worker: FakeWorker

    def judge(self, run: RunOutcome | None = None, allowed_extra: list[str] | None = None) -> JobVerdict:
        return judge(self.layout, self.job, run or outcome(), CPU, allowed_extra or [])

    def id_of(self, label: str, role: str = "main", index: int = 0) -> int:
        return call_id_of(self.layout, label, role, index)


@pytest.fixture
def bench_for(tmp_path: Path):
    def make(trials: list[Trial], name: str = "job") -> Bench:
        job = make_job(tmp_path / name)
        submission = tmp_path / "submission.py"
        submission.write_text("def kernel(x, y):\n    return x + y\n")
        layout = write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=SECRET)))
        return Bench(job, layout, FakeWorker(job))

    return make


@pytest.fixture
def bench(bench_for, add_trials: list[Trial]) -> Bench:
    return bench_for(add_trials)


def wrong_on(call_id: int, change=lambda t: t + 1):
    """An `answer` callback: the expected outputs everywhere, `change(expected)` on call `call_id`."""

    def answer(trial: Trial, plan: CallPlan, this: int) -> list[torch.Tensor] | None:
        if this != call_id:
            return None
        return [change(e.clone()) for e in expected_for_call(trial, plan)]

    return answer


def only(call_id: int, **fields):
    """A `fields` callback: overrides on call `call_id` only."""
    return lambda trial, plan, this: fields if this == call_id else {}


# --- passing ----------------------------------------------------------------------------------


def test_correct_records_pass_with_the_timed_seconds_in_call_order(bench: Bench) -> None:
    timed = call_ids(bench.layout, "timed")
    seconds = {timed[0]: 0.25, timed[1]: 0.5}
    bench.worker.answer(bench.layout, fields=lambda trial, plan, call_id: {"seconds": seconds.get(call_id, 1e-3)})
    report = bench.worker.report()
    judged = bench.judge()
    assert judged.verdict.status == Status.passed, judged.verdict.error
    assert judged.verdict.error is None and judged.verdict.flags == []
    assert judged.timed_seconds == [0.25, 0.5]
    assert judged.report == report
    results = judged.verdict.trials
    assert [result.label for result in results] == [
        "float32 public #1",
        "float32 public #2",
        "float32 hidden #1",
        "float32 hidden #2",
        "float32 hidden #3",
        "float32 heavy-tailed #1",
    ]
    assert all(result.passed and result.error is None for result in results)
    assert [check.kind for check in results[0].checks] == ["bitwise", "nontrivial"]
    assert results[0].shape == {"N": 1000} and results[2].shape is None, "hidden shapes never leave the grader"


def test_a_timing_only_trial_passes_without_checks(bench_for, add_trials: list[Trial], vector_add: Task) -> None:
    plans = plan_timed_calls(vector_add, add_trials[0], CPU, SECRET, reps=3, start=2)
    bench = bench_for([dataclasses.replace(add_trials[0], calls=plans)])
    bench.worker.answer(bench.layout, fields=lambda trial, plan, call_id: {"seconds": 0.1 * next(i + 1 for i, p in enumerate(trial.calls) if p is plan)})
    bench.worker.report()
    judged = bench.judge()
    assert judged.verdict.status == Status.passed, judged.verdict.error
    assert judged.timed_seconds == pytest.approx([0.1, 0.2, 0.3])
    assert judged.verdict.trials[0].passed and judged.verdict.trials[0].checks == []


def test_a_wrong_timed_call_in_a_timing_only_trial_fails(bench_for, add_trials: list[Trial], vector_add: Task) -> None:
    plans = plan_timed_calls(vector_add, add_trials[0], CPU, SECRET, reps=2)
    bench = bench_for([dataclasses.replace(add_trials[0], calls=plans)])
    bench.worker.answer(bench.layout, wrong_on(bench.layout[0][1][1]))
    bench.worker.report()
    judged = bench.judge()
    assert judged.verdict.status == Status.wrong_answer
    assert judged.verdict.error.startswith("float32 public #1: 1 timed call(s) on fresh inputs of this shape returned wrong results, first: bitwise:")


# --- wrong answers ----------------------------------------------------------------------------


def test_one_wrong_value_is_wrong_answer_naming_check_and_trial(bench: Bench) -> None:
    call_id = bench.id_of("float32 hidden #2")

    def one_off(expected: torch.Tensor) -> torch.Tensor:
        expected[3] += 1.0
        return expected

    bench.worker.answer(bench.layout, wrong_on(call_id, one_off))
    bench.worker.report()
    judged = bench.judge()
    verdict = judged.verdict
    assert verdict.status == Status.wrong_answer and verdict.flags == []
    assert verdict.error.startswith("bitwise failed on float32 hidden #2: ")
    assert [result.passed for result in verdict.trials] == [True, True, True, False, True, True]
    bitwise = verdict.trials[3].checks[0]
    assert bitwise.kind == "bitwise" and not bitwise.passed
    assert bitwise.diagnostics[0].mismatched == 1 and bitwise.diagnostics[0].worst[0].index == [3]
    assert verdict.trials[3].checks[1].passed, "the nontrivial self-check still passes"


def test_a_wrong_timed_call_fails_its_trial(bench: Bench) -> None:
    bench.worker.answer(bench.layout, wrong_on(bench.id_of("float32 public #1", "timed", 1), torch.zeros_like))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.wrong_answer
    assert verdict.error.startswith("float32 public #1: 1 timed call(s) on fresh inputs of this shape returned wrong results, first: bitwise:")
    first = verdict.trials[0]
    assert not first.passed and first.error == verdict.error.removeprefix("float32 public #1: ")
    assert all(check.passed for check in first.checks), "the trial's own (non-timed) checks passed"


def test_nondeterministic_repeats_fail_deterministic(bench_for) -> None:
    embedding = find_task("l1/embedding_backward")
    bench = bench_for(plan_trials(embedding, CPU, SECRET, include_hidden=False))
    # A last-bit change on the second repeat: allclose still passes, bits do not.
    bench.worker.answer(bench.layout, wrong_on(bench.id_of("float32 public #2", "repeat", 1), lambda t: torch.nextafter(t, t + 1)))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.wrong_answer
    assert verdict.error.startswith("deterministic failed on float32 public #2: ")
    assert "changed between runs on identical inputs" in verdict.error
    kinds = {check.kind: check.passed for check in verdict.trials[1].checks}
    assert kinds == {"deterministic": False, "allclose": True, "nontrivial": True}
    assert verdict.trials[0].passed


def test_a_sub_batch_that_differs_fails_batch_invariant(bench_for) -> None:
    linear = find_task("l1/linear_batch_invariant")
    bench = bench_for(plan_trials(linear, CPU, SECRET, include_hidden=False))
    call_id = bench.id_of("float32 public #1", "sub_batch", 1)
    bench.worker.answer(bench.layout, wrong_on(call_id, lambda t: torch.nextafter(t, t + 1)))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.wrong_answer
    assert verdict.error.startswith("batch_invariant failed on float32 public #1: ")
    assert "sub-batches [0, 1), [1, 3)" in verdict.error
    kinds = {check.kind: check.passed for check in verdict.trials[0].checks}
    assert kinds == {"batch_invariant": False, "normwise": True, "allclose": True, "nontrivial": True}


def test_an_oracle_check_judges_against_the_oracle(bench_for) -> None:
    cumsum = find_task("l1/cumsum")
    trials = plan_trials(cumsum, CPU, SECRET, include_hidden=False)
    honest = bench_for(trials, "honest")
    honest.worker.answer(honest.layout)
    honest.worker.report()
    assert honest.judge().verdict.status == Status.passed
    # Accumulating in float16 is ~1000x the reference's error: far over the 128x allowed.
    sloppy = bench_for(trials, "sloppy")
    sloppy.worker.answer(sloppy.layout, lambda trial, plan, call_id: [plan.args["x"].half().cumsum(-1, dtype=torch.float16).float()])
    sloppy.worker.report()
    verdict = sloppy.judge().verdict
    assert verdict.status == Status.wrong_answer
    assert verdict.error.startswith("oracle failed on float32 public #1: ")


@pytest.mark.parametrize(
    ("output_fields", "container", "message"),
    [
        ({"dtype": "float64"}, "tensor", "output: dtype float64, expected float32"),
        ({"shape": [999]}, "tensor", "output: shape [999], expected [1000]"),
        ({"device": "cuda"}, "tensor", "output: on device cuda, expected cpu"),
        ({"dense": False, "strides": [0]}, "tensor", "output: elements overlap or leave gaps (strides [0]); return a dense tensor"),
        ({}, "tuple", "returned tuple, expected a single torch.Tensor"),
        ({}, "list", "returned list, expected a single torch.Tensor"),
    ],
    ids=["dtype", "shape", "device", "not-dense", "tuple", "list"],
)
def test_wrong_structure_is_wrong_answer(bench: Bench, output_fields: dict, container: str, message: str) -> None:
    call_id = bench.id_of("float32 public #1")
    bench.worker.answer(bench.layout, skip={call_id})
    # The main call of the first trial: the right values, the wrong structure.
    expected = bench.layout[0][0].expected[0]
    bench.worker.call(call_id, [expected.clone()], container=container, output_fields=output_fields)
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.wrong_answer and verdict.flags == []
    assert verdict.error == message
    assert verdict.trials[0].error == message and not verdict.trials[0].passed and verdict.trials[0].checks == []
    assert all(result.passed for result in verdict.trials[1:])


def test_too_many_outputs_is_wrong_answer(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout, lambda trial, plan, this: [trial.expected[0].clone()] * 2 if this == call_id else None, only(call_id, container="tensor"))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.wrong_answer
    assert verdict.error == "returned 2 outputs, expected 1"


# --- failed and missing calls -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("error_type", "status"),
    [
        ("CompilationError", Status.compile_error),
        ("CompileTimeAssertionFailure", Status.compile_error),
        ("UnsupportedLanguageConstruct", Status.compile_error),
        ("ValueError", Status.runtime_error),
        ("SystemExit", Status.runtime_error),
    ],
)
def test_a_call_that_raised(bench: Bench, error_type: str, status: Status) -> None:
    call_id = bench.id_of("float32 hidden #1")
    bench.worker.answer(bench.layout, skip={call_id})
    bench.worker.failed(call_id, error_type, "at 12:4: bad things")
    bench.worker.report()
    judged = bench.judge()
    assert judged.verdict.status == status
    assert judged.verdict.error == f"{error_type}: at 12:4: bad things"
    assert [(result.label, result.error) for result in judged.verdict.trials] == [("float32 hidden #1", f"the kernel raised {error_type}")]
    assert judged.timed_seconds == []


def test_a_missing_record_after_a_timeout_is_timeout(bench: Bench) -> None:
    call_id = bench.id_of("float32 hidden #1")
    later = [other for other in call_ids(bench.layout) if other >= call_id]
    bench.worker.answer(bench.layout, skip=set(later))
    (bench.job.out_dir / CURRENT_CALL_FILE).write_text(str(call_id))
    judged = bench.judge(outcome(exit_code=-9, timed_out=True, wall_s=30.4))
    assert judged.verdict.status == Status.timeout
    assert judged.verdict.error == "the kernel ran past the 30 s limit (killed during a call on float32 hidden #1)"
    assert judged.report is None and judged.timed_seconds == []
    assert not judged.verdict.trials[-1].passed


def test_a_timeout_without_a_current_call_names_no_trial(bench: Bench) -> None:
    judged = bench.judge(outcome(exit_code=-9, timed_out=True, wall_s=5.0))
    assert judged.verdict.status == Status.timeout
    assert judged.verdict.error == "the kernel ran past the 5 s limit (killed during a call on an unknown call)"


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (outcome(exit_code=-11), "the worker was killed by signal 11 during call {id} before finishing"),
        (outcome(exit_code=139), "the worker was killed by signal 11 (exit status 139) during call {id} before finishing"),
        (
            outcome(exit_code=1, stderr="Traceback\nRuntimeError: oops\n"),
            "the worker exited with status 1 during call {id} before finishing; stderr tail:\nTraceback\nRuntimeError: oops",
        ),
        (outcome(exit_code=-9, limit_hit="memory"), "the worker ran out of its memory limit during call {id} and was killed"),
        (outcome(exit_code=-9, limit_hit="output"), "the worker wrote more than the output limit during call {id} and was killed"),
    ],
    ids=["signal", "shell-signal", "exit-status", "memory", "output"],
)
def test_a_missing_record_after_a_crash_is_runtime_error(bench: Bench, run: RunOutcome, message: str) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout, skip={call_id})
    (bench.job.out_dir / CURRENT_CALL_FILE).write_text(str(call_id))
    verdict = bench.judge(run).verdict
    assert verdict.status == Status.runtime_error
    assert verdict.error == message.format(id=call_id)


def test_a_record_under_another_id_counts_as_missing(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #1")
    bench.worker.answer(bench.layout)
    bench.worker.report()
    # The record file of `call_id` holds the record of another call.
    other = (bench.job.out_dir / call_record_file(bench.id_of("float32 public #2"))).read_bytes()
    (bench.job.out_dir / call_record_file(call_id)).write_bytes(other)
    verdict = bench.judge(outcome(exit_code=0)).verdict
    assert verdict.status == Status.runtime_error
    assert verdict.error == "the worker exited with status 0 before finishing"


def test_a_missing_report_is_runtime_error(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    judged = bench.judge(outcome(exit_code=0, stderr="Fatal Python error: Aborted"))
    assert judged.report is None
    assert judged.verdict.status == Status.runtime_error
    assert judged.verdict.error == "the worker exited with status 0 before finishing; stderr tail:\nFatal Python error: Aborted"


def test_a_timeout_after_the_last_record_is_a_timeout_not_a_crash(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    judged = bench.judge(outcome(exit_code=-9, timed_out=True, wall_s=120.0))
    assert judged.report is None
    assert judged.verdict.status == Status.timeout
    assert judged.verdict.error.startswith("the kernel ran past the 120 s limit after its last call")


def test_a_malformed_report_is_runtime_error(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    (bench.job.out_dir / REPORT_FILE).write_text('{"phase": "done", "verdict": "passed"}')
    with pytest.raises(GradeFailure) as caught:
        bench.judge()
    assert caught.value.status == Status.runtime_error and "report.json is malformed" in caught.value.message


def test_a_missing_output_file_is_runtime_error(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout)
    bench.worker.report()
    (bench.job.out_dir / f"call{call_id}_out0.bin").unlink()
    verdict = bench.judge().verdict
    assert verdict.status == Status.runtime_error
    assert verdict.error == f"malformed worker output: call{call_id}_out0.bin: missing or not a regular file"
    assert verdict.trials[-1].label == "float32 public #2" and not verdict.trials[-1].passed


def test_an_import_error_is_compile_error(bench: Bench) -> None:
    bench.worker.report(phase="import", import_error_type="SyntaxError", import_error="invalid syntax (submission.py, line 3)")
    judged = bench.judge()
    assert judged.verdict.status == Status.compile_error
    assert judged.verdict.error == "SyntaxError: invalid syntax (submission.py, line 3)"
    assert judged.verdict.trials == [] and judged.report.import_error_type == "SyntaxError"


# --- integrity --------------------------------------------------------------------------------


def test_a_forbidden_torch_op_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 hidden #1")
    bench.worker.answer(bench.layout, fields=only(call_id, torch_ops={"aten.empty_like": 1, "aten.add": 1}))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["torch_compute:aten.add"]
    assert verdict.error.startswith("torch ran aten.add during the call")
    assert all(result.passed for result in verdict.trials), "the values were right; the rule decides"


@pytest.mark.parametrize("entry", ["arange", "torch.arange", "aten.arange"])
def test_a_task_allowed_torch_entry_allows_its_aten_op(bench: Bench, entry: str) -> None:
    bench.worker.answer(bench.layout, fields=lambda trial, plan, call_id: {"torch_ops": {"aten.arange": 2, "aten.empty": 1}})
    bench.worker.report()
    assert bench.judge(allowed_extra=[entry]).verdict.status == Status.passed
    refused = bench.judge(allowed_extra=["zeros_like"]).verdict
    assert refused.status == Status.rejected and refused.flags == ["torch_compute:aten.arange"]


def test_compute_at_import_is_rejected(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report(import_ops={"aten.mm": 1})
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["torch_compute_at_import:aten.mm"]


def test_a_call_without_a_launch_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout, fields=only(call_id, launches={}))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["no_triton_launch"]


def test_mutated_inputs_are_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #1", "timed", 0)
    bench.worker.answer(bench.layout, fields=only(call_id, inputs_mutated=["y"]))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["input_mutated:y"]
    assert verdict.error == "the kernel modified its input 'y'; inputs are read-only"


def test_a_tensor_subclass_output_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout, skip={call_id})
    lazy = OutputRecord(python_type="submission.Lazy", exact_tensor=False, dtype="float32", shape=[4097], device="cpu", strides=[1], dense=True)
    bench.worker.record(CallRecord(id=call_id, ok=True, container="tensor", outputs=[lazy], seconds=1e-3, launches=dict(LAUNCHES)))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["non_tensor_output"]
    assert verdict.error == "returned submission.Lazy where a plain torch.Tensor is required"
    assert verdict.trials[1].error == "returned something other than torch.Tensor"


def test_an_unexpected_file_in_the_output_folder_is_rejected(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report()
    (bench.job.out_dir / "call999.json").write_text("{}")
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["result_channel_forgery"]
    assert verdict.error == "unexpected files in the output folder: call999.json"


def test_the_current_call_marker_is_not_unexpected(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report()
    (bench.job.out_dir / CURRENT_CALL_FILE).write_text("3")
    assert bench.judge().verdict.status == Status.passed


def test_an_output_whose_hash_differs_from_the_report_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 hidden #2")
    bench.worker.answer(bench.layout)
    bench.worker.report()
    # Same size, same (correct) values' description: only the bytes changed after the worker hashed them.
    path = bench.job.out_dir / f"call{call_id}_out0.bin"
    path.write_bytes(path.read_bytes()[::-1])
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["result_channel_forgery"]
    assert verdict.error == f"files not written as the worker wrote them: call{call_id}_out0.bin"


def test_a_record_the_report_does_not_know_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #1")
    bench.worker.answer(bench.layout)
    files = dict(bench.worker.files)
    del files[call_record_file(call_id)]
    bench.worker.report(files=files)
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["result_channel_forgery"]
    assert verdict.error == f"files not written as the worker wrote them: {call_record_file(call_id)}"


def test_a_rewritten_record_is_rejected(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #1")
    bench.worker.answer(bench.layout)
    bench.worker.report()
    path = bench.job.out_dir / call_record_file(call_id)
    path.write_text(path.read_text().replace('"torch_ops":{"aten.empty_like":1}', '"torch_ops":{}'))
    assert hashlib.sha256(path.read_bytes()).hexdigest() != bench.worker.files[path.name]
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected
    assert verdict.error == f"files not written as the worker wrote them: {path.name}"


def test_the_forgery_exit_code_is_rejected(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report()
    verdict = bench.judge(outcome(exit_code=ExitCode.forgery)).verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["result_channel_forgery"]
    assert verdict.error == "the worker found its report already written by someone else"


def test_a_forged_record_reported_by_the_worker_is_rejected(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report(forged="call2.json")
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["result_channel_forgery"]


def test_a_rule_outranks_a_wrong_value(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #1")
    bench.worker.answer(bench.layout, wrong_on(call_id, torch.zeros_like), only(call_id, inputs_mutated=["x"]))
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.rejected and verdict.flags == ["input_mutated:x"]
    assert not verdict.trials[0].passed


# --- the task's own self-check ----------------------------------------------------------------


def test_a_failing_nontrivial_check_is_the_tasks_fault(bench_for, vector_add: Task) -> None:
    inputs = {"x": torch.zeros(8), "y": torch.zeros(8)}
    checks = list(vector_add.spec.contract)
    assert [check.blame for check in checks] == ["submission", "task"]
    weak = Trial(
        label="float32 public #1",
        dtype=torch.float32,
        shape={"N": 8},
        hidden=False,
        inputs=inputs,
        expected=[torch.zeros(8)],
        returns_tuple=False,
        oracle=None,
        checks=checks,
        calls=plan_calls(checks, inputs),
    )
    bench = bench_for([weak])
    bench.worker.answer(bench.layout)
    bench.worker.report()
    verdict = bench.judge().verdict
    assert verdict.status == Status.infra_error
    assert verdict.error.startswith("task self-check failed on float32 public #1: the task's inputs do not separate the right answer from: zeros")
    assert "input 'x' passed through" in verdict.error
    assert {check.kind: check.passed for check in verdict.trials[0].checks} == {"bitwise": True, "nontrivial": False}


# --- bugs these tests found, fixed ---------------------------------------------------------


def test_a_binary_current_call_marker_is_still_runtime_error(bench: Bench) -> None:
    call_id = bench.id_of("float32 public #2")
    bench.worker.answer(bench.layout, skip={call_id})
    (bench.job.out_dir / CURRENT_CALL_FILE).write_bytes(b"\xff\xfe" * 10)
    verdict = bench.judge(outcome(exit_code=-11)).verdict
    assert verdict.status == Status.runtime_error
    assert verdict.error.startswith("the worker was killed by signal 11")


def test_the_forgery_exit_code_outranks_a_reported_import_error(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    bench.worker.report(phase="import", import_error_type="SyntaxError", import_error="planted by the submission")
    verdict = bench.judge(outcome(exit_code=ExitCode.forgery)).verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["result_channel_forgery"]


def test_the_forgery_exit_code_outranks_a_planted_malformed_report(bench: Bench) -> None:
    bench.worker.answer(bench.layout)
    (bench.job.out_dir / REPORT_FILE).write_text('{"phase": "done", "verdict": "passed"}')
    verdict = bench.judge(outcome(exit_code=ExitCode.forgery)).verdict
    assert verdict.status == Status.rejected
    assert verdict.flags == ["result_channel_forgery"]
