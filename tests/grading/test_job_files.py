"""The job folder: the request and inputs the grader writes, and reading the worker's files back (no sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gym.errors import GradeFailure
from gym.grading.planning.plan import CallPlan, TimingRequest, Trial, expected_for_call, plan_trials, plan_warmup_call
from gym.grading.running.job_files import MAX_RECORD_BYTES, JobCalls, JobContents, read_model, read_outputs, write_job
from gym.sandbox import Job
from gym.schema.result import Status
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from gym.worker.protocol import (
    REQUEST_FILE,
    SUBMISSION_FILE,
    CallRecord,
    OutputRecord,
    TensorFile,
    WorkerRequest,
)
from gym.worker.tensor_io import read_tensor, write_tensor
from tests.support.worker_records import make_job

CPU = torch.device("cpu")
SOURCE = "def kernel(*args):\n    raise NotImplementedError\n"


@pytest.fixture(scope="module")
def embedding() -> Task:
    return find_task("l1/embedding_backward")


@pytest.fixture(scope="module")
def trials(embedding: Task) -> list[Trial]:
    # Repeats (deterministic runs=3), a scalar argument, and two timed calls on the first trial.
    return plan_trials(embedding, CPU, secret=9, timing=TimingRequest(reps=2))


@pytest.fixture
def job(tmp_path: Path) -> Job:
    return make_job(tmp_path / "job")


@pytest.fixture
def submission(tmp_path: Path) -> Path:
    path = tmp_path / "mine.py"
    path.write_text(SOURCE)
    return path


def read_request(job: Job) -> WorkerRequest:
    return WorkerRequest.model_validate_json((job.in_dir / REQUEST_FILE).read_text())


def plans_by_id(layout: list[tuple[Trial, list[int]]]) -> dict[int, tuple[Trial, CallPlan]]:
    return {call_id: (trial, plan) for trial, ids in layout for plan, call_id in zip(trial.calls, ids)}


# --- write_job --------------------------------------------------------------------------------


def test_the_request_names_the_submission_and_device(job: Job, submission: Path, trials: list[Trial]) -> None:
    write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=1)))
    request = read_request(job)
    assert request.submission == SUBMISSION_FILE and request.device == "cpu"
    assert (job.in_dir / SUBMISSION_FILE).read_text() == SOURCE
    assert request.warmups == [] and request.warmup_s == 0.0


def test_call_ids_are_shuffled_and_the_request_sorted(job: Job, submission: Path, trials: list[Trial]) -> None:
    layout = write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=1)))
    total = sum(len(trial.calls) for trial in trials)
    assert [trial for trial, _ in layout] == trials
    assert [len(ids) for _, ids in layout] == [len(trial.calls) for trial in trials]
    flat = [call_id for _, ids in layout for call_id in ids]
    assert sorted(flat) == list(range(total))
    assert flat != list(range(total)), "ids must not give away which call is which"
    assert [call.id for call in read_request(job).calls] == list(range(total)), "the worker runs calls in id order"


def test_the_shuffle_follows_the_seed(tmp_path: Path, submission: Path, trials: list[Trial]) -> None:
    def ids(seed: int, name: str) -> list[list[int]]:
        return [ids for _, ids in write_job(make_job(tmp_path / name), JobContents(submission, JobCalls(trials, shuffle_seed=seed)))]

    assert ids(5, "a") == ids(5, "b")
    assert ids(5, "a2") != ids(6, "c")


def test_inputs_are_written_and_repeats_share_them(job: Job, submission: Path, trials: list[Trial]) -> None:
    layout = write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=3)))
    calls = {call.id: call for call in read_request(job).calls}
    first, _ = layout[0]
    files_per_trial = []
    for trial, ids in layout:
        same_inputs = [call_id for plan, call_id in zip(trial.calls, ids) if plan.role in {"main", "repeat"}]
        assert len(same_inputs) == 3
        wires = [calls[call_id].args for call_id in same_inputs]
        assert all(wire == wires[0] for wire in wires), "main and repeats share their input files"
        by_name = {arg.name: arg for arg in wires[0]}
        assert [arg.name for arg in wires[0]] == ["indices", "grad_output", "num_weights"]
        assert by_name["num_weights"].tensor is None and by_name["num_weights"].value == trial.inputs["num_weights"]
        for name in ("indices", "grad_output"):
            tensor = by_name[name].tensor
            assert tensor is not None and by_name[name].value is None
            assert torch.equal(read_tensor(job.in_dir, tensor), trial.inputs[name])
        files_per_trial.append(by_name["grad_output"].tensor.file)
    assert len(set(files_per_trial)) == len(layout), "each trial has files of its own"
    timed = [call_id for plan, call_id in zip(first.calls, layout[0][1]) if plan.role == "timed"]
    timed_files = {calls[call_id].args[1].tensor.file for call_id in timed}
    assert len(timed_files) == 2 and not timed_files & set(files_per_trial), "timed calls have inputs of their own"


def test_poison_sizes_are_the_expected_output_sizes(tmp_path: Path, submission: Path) -> None:
    linear = find_task("l1/linear_batch_invariant")
    trials = plan_trials(linear, CPU, secret=2, include_hidden=False, timing=TimingRequest(reps=1))
    job = make_job(tmp_path / "job")
    layout = write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=4)))
    calls = {call.id: call for call in read_request(job).calls}
    seen_spans = []
    for call_id, (trial, plan) in plans_by_id(layout).items():
        expected = expected_for_call(trial, plan)
        assert calls[call_id].poison_bytes == [e.numel() * 4 for e in expected]
        if plan.role == "sub_batch":
            seen_spans.append(plan.span)
            stop_minus_start = plan.span[1] - plan.span[0]
            assert calls[call_id].poison_bytes == [stop_minus_start * trial.shape["N"] * 4]
            x = next(arg for arg in calls[call_id].args if arg.name == "x").tensor
            assert x.shape == [stop_minus_start, trial.shape["K"]]
    assert (1, 3) in seen_spans


def test_the_warm_up_calls_come_last_with_inputs_of_their_own(job: Job, submission: Path, trials: list[Trial], embedding: Task) -> None:
    warmups = [plan_warmup_call(embedding, trial, CPU, 9) for trial in trials[:2]]
    layout = write_job(job, JobContents(submission, JobCalls(trials, shuffle_seed=1, warmups=warmups), warmup_s=0.5))
    request = read_request(job)
    total = sum(len(ids) for _, ids in layout)
    assert [call.id for call in request.warmups] == [total, total + 1] and request.warmup_s == 0.5
    assert all(call.poison_bytes == [] for call in request.warmups)
    assert all(call.id < total for call in request.calls)
    call_files = {arg.tensor.file for call in request.calls for arg in call.args if arg.tensor}
    for warmup, call in zip(warmups, request.warmups):
        grad = next(arg for arg in call.args if arg.name == "grad_output").tensor
        assert torch.equal(read_tensor(job.in_dir, grad), warmup.args["grad_output"])
        assert grad.file not in call_files


def test_a_cuda_job_tells_the_worker_its_one_gpu(tmp_path: Path, submission: Path, trials: list[Trial]) -> None:
    cuda_job = make_job(tmp_path / "cuda", "cuda")
    write_job(cuda_job, JobContents(submission, JobCalls(trials[:1], shuffle_seed=1)))
    assert read_request(cuda_job).device == "cuda:0"


def test_the_worker_package_is_staged_under_lib(job: Job, submission: Path, trials: list[Trial]) -> None:
    write_job(job, JobContents(submission, JobCalls(trials[:1], shuffle_seed=1)))
    staged = job.lib_dir / "gym" / "worker"
    for name in ("__main__.py", "protocol.py", "tensor_io.py", "op_trace.py", "torch_policy.py"):
        assert (staged / name).is_file(), name
    assert (staged / "protocol.py").read_text() == (Path(__file__).parents[2] / "gym" / "worker" / "protocol.py").read_text()
    assert not (job.lib_dir / "gym" / "__init__.py").exists(), "only the worker is importable in the sandbox"
    assert not (job.lib_dir / "gym" / "grading").exists()


# --- read_model -------------------------------------------------------------------------------

RECORD = CallRecord(id=3, ok=True, container="tensor")


def test_read_model_reads_a_valid_record(tmp_path: Path) -> None:
    (tmp_path / "call3.json").write_text(RECORD.model_dump_json())
    assert read_model(tmp_path / "call3.json", CallRecord) == RECORD


def test_read_model_missing_symlink_or_folder_is_none(tmp_path: Path) -> None:
    assert read_model(tmp_path / "call3.json", CallRecord) is None
    real = tmp_path / "elsewhere.json"
    real.write_text(RECORD.model_dump_json())
    (tmp_path / "call3.json").symlink_to(real)
    assert read_model(tmp_path / "call3.json", CallRecord) is None, "a symlink is never followed"
    (tmp_path / "call4.json").mkdir()
    assert read_model(tmp_path / "call4.json", CallRecord) is None


def test_read_model_refuses_an_oversized_record(tmp_path: Path) -> None:
    path = tmp_path / "call3.json"
    path.write_text(RECORD.model_dump_json() + " " * MAX_RECORD_BYTES)
    with pytest.raises(GradeFailure) as caught:
        read_model(path, CallRecord)
    assert caught.value.status == Status.runtime_error
    assert "call3.json" in caught.value.message and "larger than" in caught.value.message


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"id": 3}',  # `ok` missing
        b'{"id": -1, "ok": true}',
        b'{"id": 3, "ok": true, "verdict": "passed"}',  # extra fields are refused
        b"\xff\xfe\x00",
        b"",
    ],
    ids=["not-json", "missing-field", "negative-id", "extra-field", "binary", "empty"],
)
def test_read_model_refuses_a_malformed_record(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "call3.json"
    path.write_bytes(content)
    with pytest.raises(GradeFailure) as caught:
        read_model(path, CallRecord)
    assert caught.value.status == Status.runtime_error
    assert caught.value.message.startswith("worker record call3.json is malformed: ")


# --- read_outputs -----------------------------------------------------------------------------


def output_of(meta: TensorFile | None) -> OutputRecord:
    return OutputRecord(python_type="torch.Tensor", exact_tensor=True, dtype="float32", shape=[4], device="cpu", strides=[1], dense=True, data=meta)


def test_read_outputs_reads_every_tensor(tmp_path: Path) -> None:
    a, b = torch.arange(4.0), torch.arange(6, dtype=torch.int64).reshape(2, 3)
    got = read_outputs(tmp_path, [output_of(write_tensor(tmp_path, "o0.bin", a)), output_of(write_tensor(tmp_path, "o1.bin", b))])
    assert len(got) == 2 and torch.equal(got[0], a) and torch.equal(got[1], b) and got[1].dtype == torch.int64


def failure(tmp_path: Path, meta: TensorFile | None) -> GradeFailure:
    with pytest.raises(GradeFailure) as caught:
        read_outputs(tmp_path, [output_of(meta)])
    assert caught.value.status == Status.runtime_error
    return caught.value


def test_read_outputs_refuses_what_does_not_match_its_description(tmp_path: Path) -> None:
    meta = write_tensor(tmp_path, "o0.bin", torch.arange(4.0))
    assert failure(tmp_path, None).message == "the worker wrote no data for a tensor output"
    missing = failure(tmp_path, meta.model_copy(update={"file": "gone.bin"}))
    assert missing.message.startswith("malformed worker output: gone.bin: missing")
    wrong_nbytes = failure(tmp_path, meta.model_copy(update={"nbytes": 12}))
    assert "needs 16 bytes, described as 12" in wrong_nbytes.message
    wrong_shape = failure(tmp_path, meta.model_copy(update={"shape": [8], "nbytes": 32}))
    assert "file holds 16 bytes, described as 32" in wrong_shape.message
    wrong_dtype = failure(tmp_path, meta.model_copy(update={"dtype": "float1024"}))
    assert wrong_dtype.message.startswith("malformed worker output: ")
    (tmp_path / "link.bin").symlink_to(tmp_path / "o0.bin")
    linked = failure(tmp_path, meta.model_copy(update={"file": "link.bin"}))
    assert "missing or not a regular file" in linked.message
