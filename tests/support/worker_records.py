"""Write what the worker would write, by hand: call records, output tensors, the final report.

For unit tests of the judge without a sandbox or a worker process. `FakeWorker`
mirrors `gym/worker/__main__.py`: output tensors go to `call{id}_out{i}.bin`,
each record to `call_record_file(id)` as `model_dump_json()`, and the report
carries the sha256 of every record and output file written (`files`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import torch

from gym.grading.planning.plan import CallPlan, Trial, expected_for_call
from gym.sandbox import Job, RunOutcome
from gym.worker.dtypes import dtype_name
from gym.worker.protocol import (
    REPORT_FILE,
    CallRecord,
    OutputRecord,
    WorkerReport,
    call_record_file,
)
from gym.worker.tensor_io import write_tensor

# A launch every honest call makes (the judge rejects a call without one).
LAUNCHES = {"_add_kernel": 1}


def make_job(root: Path, device: str = "cpu") -> Job:
    """A job folder (in/, out/, scratch/) under `root`, created if needed."""
    root.mkdir(parents=True, exist_ok=True)
    return Job.in_folder(root, device)


def outcome(exit_code: int | None = 0, timed_out: bool = False, wall_s: float = 1.0, stderr: str = "", limit_hit: str | None = None) -> RunOutcome:
    """A sandbox run's outcome as the backend would report it."""
    return RunOutcome(exit_code=exit_code, timed_out=timed_out, wall_s=wall_s, stdout_tail="", stderr_tail=stderr, limit_hit=limit_hit)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FakeWorker:
    """Writes a job's output folder the way the worker does, and remembers the hashes."""

    def __init__(self, job: Job) -> None:
        self.job = job
        # sha256 of every record and output written, by file name (the report's `files`).
        self.files: dict[str, str] = {}

    @property
    def out_dir(self) -> Path:
        return self.job.out_dir

    def output(self, call_id: int, index: int, tensor: torch.Tensor, **fields: Any) -> OutputRecord:
        """Write one exact-tensor output and describe it (fields override the description)."""
        name = f"call{call_id}_out{index}.bin"
        data = write_tensor(self.out_dir, name, tensor)
        self.files[name] = sha256((self.out_dir / name).read_bytes())
        described: dict[str, Any] = {
            "python_type": "torch.Tensor",
            "exact_tensor": True,
            "dtype": dtype_name(tensor.dtype),
            "shape": list(tensor.shape),
            "device": tensor.device.type,
            "strides": list(tensor.stride()),
            "dense": True,
            "data": data,
        }
        described.update(fields)
        return OutputRecord.model_validate(described)

    def record(self, record: CallRecord) -> CallRecord:
        """Write a record exactly as the worker does."""
        data = record.model_dump_json().encode()
        name = call_record_file(record.id)
        (self.out_dir / name).write_bytes(data)
        self.files[name] = sha256(data)
        return record

    def call(
        self,
        call_id: int,
        tensors: list[torch.Tensor],
        *,
        container: str = "tensor",
        output_fields: dict[str, Any] | None = None,
        **fields: Any,
    ) -> CallRecord:
        """A successful call that returned `tensors`; `fields` override the record's own fields."""
        outputs = [self.output(call_id, index, tensor, **(output_fields or {})) for index, tensor in enumerate(tensors)]
        base: dict[str, Any] = {
            "id": call_id,
            "ok": True,
            "container": container,
            "outputs": outputs,
            "seconds": 1e-3,
            "torch_ops": {"aten.empty_like": 1},
            "launches": dict(LAUNCHES),
        }
        base.update(fields)
        return self.record(CallRecord.model_validate(base))

    def failed(self, call_id: int, error_type: str, error: str = "boom") -> CallRecord:
        """A call that raised."""
        return self.record(CallRecord(id=call_id, ok=False, error_type=error_type, error=error))

    def answer(
        self,
        layout: list[tuple[Trial, list[int]]],
        answer: Callable[[Trial, CallPlan, int], list[torch.Tensor] | None] | None = None,
        fields: Callable[[Trial, CallPlan, int], dict[str, Any]] | None = None,
        skip: Collection[int] = (),
    ) -> None:
        """Record every call of `layout` (but those in `skip`): the expected outputs, unless
        `answer(trial, plan, call_id)` returns other tensors for it; `fields(...)` overrides
        record fields. Calls are written in id order, as the worker makes them."""
        planned = sorted(((call_id, trial, plan) for trial, ids in layout for plan, call_id in zip(trial.calls, ids)), key=lambda item: item[0])
        for call_id, trial, plan in planned:
            if call_id in skip:
                continue
            tensors = answer(trial, plan, call_id) if answer is not None else None
            if tensors is None:
                tensors = [e.clone() for e in expected_for_call(trial, plan)]
            overrides: dict[str, Any] = {"container": "tuple" if trial.returns_tuple else "tensor"}
            overrides.update(fields(trial, plan, call_id) if fields is not None else {})
            self.call(call_id, tensors, **overrides)

    def report(self, **fields: Any) -> WorkerReport:
        """The final report, with the hashes of everything written so far (unless `files` is given)."""
        base: dict[str, Any] = {
            "phase": "done",
            "files": dict(self.files),
            "torch_version": torch.__version__,
            "triton_version": "3.0.0",
            "device_name": "cpu (Triton interpreter)",
        }
        base.update(fields)
        report = WorkerReport.model_validate(base)
        (self.out_dir / REPORT_FILE).write_bytes(report.model_dump_json().encode())
        return report


def call_ids(layout: list[tuple[Trial, list[int]]], role: str | None = None) -> list[int]:
    """Ids of every call (of `role`, when given), trial by trial in plan order."""
    return [call_id for trial, ids in layout for plan, call_id in zip(trial.calls, ids) if role is None or plan.role == role]


def call_id_of(layout: list[tuple[Trial, list[int]]], label: str, role: str = "main", index: int = 0) -> int:
    """The id of the `index`-th call of `role` on the trial labelled `label`."""
    for trial, ids in layout:
        if trial.label == label:
            return [call_id for plan, call_id in zip(trial.calls, ids) if plan.role == role][index]
    raise KeyError(label)
