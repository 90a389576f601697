"""Integrity rules on worker records, and the op allow-list."""

from __future__ import annotations

from pathlib import Path

from gym.grading.judging.integrity import call_violations, report_violations, unexpected_files
from gym.worker.protocol import CallRecord, OutputRecord, WorkerReport
from gym.worker.torch_policy import PLUMBING_OPS, forbidden

TENSOR = OutputRecord(python_type="torch.Tensor", exact_tensor=True, dtype="float32", shape=[4], device="cpu", strides=[1], dense=True)


def record(**fields: object) -> CallRecord:
    base: dict[str, object] = {"id": 0, "ok": True, "container": "tensor", "outputs": [TENSOR], "launches": {"_add": 1}}
    base.update(fields)
    return CallRecord.model_validate(base)


def flags(violations) -> list[str]:
    return [violation.flag for violation in violations]


def test_an_honest_record_is_clean() -> None:
    assert call_violations(record(torch_ops={"aten.empty_like": 1, "aten.view": 2, "aten.copy_": 1})) == []


def test_compute_ops_are_named_most_frequent_first() -> None:
    found = call_violations(record(torch_ops={"aten.mm": 1, "aten.add": 3, "aten.empty": 1}))
    assert flags(found) == ["torch_compute:aten.add", "torch_compute:aten.mm"]
    assert "aten.add" in found[0].message


def test_task_allow_list_extends_plumbing() -> None:
    assert forbidden({"aten.arange": 1}) == ["aten.arange"]
    assert forbidden({"aten.arange": 1}, ["aten.arange"]) == []
    assert "aten._local_scalar_dense" not in PLUMBING_OPS and "aten.lift_fresh" not in PLUMBING_OPS


def test_each_call_rule() -> None:
    assert flags(call_violations(record(launches={}))) == ["no_triton_launch"]
    assert flags(call_violations(record(inputs_mutated=["x"]))) == ["input_mutated:x"]
    assert flags(call_violations(record(new_threads=["Thread-1"]))) == ["background_thread"]
    subclass = TENSOR.model_copy(update={"python_type": "submission.Lazy", "exact_tensor": False})
    assert flags(call_violations(record(outputs=[subclass]))) == ["non_tensor_output"]
    assert flags(call_violations(record(container="builtins.dict", outputs=[]))) == ["non_tensor_output"]


def test_report_rules() -> None:
    assert report_violations(WorkerReport(phase="done")) == []
    assert flags(report_violations(WorkerReport(phase="done", import_ops={"aten.mm": 1}))) == ["torch_compute_at_import:aten.mm"]
    assert flags(report_violations(WorkerReport(phase="done", import_launches={"_k": 1}))) == ["launch_at_import"]
    assert flags(report_violations(WorkerReport(phase="done", changed_after_return=[3]))) == ["output_changed_after_return"]
    assert flags(report_violations(WorkerReport(phase="done", forged="call1.json"))) == ["result_channel_forgery"]


def test_unannounced_files_are_forgery(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{}")
    assert unexpected_files(tmp_path, {"report.json"}) == []
    (tmp_path / "call9.json").write_text("{}")
    assert flags(unexpected_files(tmp_path, {"report.json"})) == ["result_channel_forgery"]


def test_warm_up_runs_obey_the_call_rules() -> None:
    warm = record(outputs=[], torch_ops={"aten.add": 2}, inputs_mutated=["x"], seconds=0.1)
    found = report_violations(WorkerReport(phase="done", warmup=warm, warmup_runs=2))
    assert flags(found) == ["torch_compute:aten.add", "input_mutated:x"]
    assert all(violation.message.startswith("warm-up: ") for violation in found)
    raised = record(ok=False, outputs=[], error_type="ValueError", error="boom", launches={})
    assert report_violations(WorkerReport(phase="done", warmup=raised)) == []  # the timed calls report the error


def test_torch_compute_on_the_first_call_only_is_caught_in_the_warm_up(vector_add, tmp_path: Path) -> None:
    """The warm-up is the first call a process sees: compute done only then is still flagged."""
    from gym.grading.grader import grade

    source = vector_add.solution_path.read_text().replace(
        "def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n",
        "_first = [True]\n\n\ndef kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n"
        "    if _first[0]:\n        _first[0] = False\n        return x + y\n",
    )
    path = tmp_path / "first_call.py"
    path.write_text(source)
    result = grade(vector_add, path)
    assert result.status.value == "rejected"
    assert "torch_compute:aten.add" in result.integrity_flags
    assert "warm-up" in result.feedback or "warm-up" in (result.error or "")
