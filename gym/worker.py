"""The worker: runs one submission on the inputs of one grade, nothing else.

    python -m gym.worker IN_DIR OUT_DIR

It reads `IN_DIR/request.json` and the input tensors, imports the submission
from its file, makes every requested call on fresh clones of the inputs,
writes a `CallRecord` (and output tensors) per call into OUT_DIR, then times
one call and writes `report.json`. It never sees reference code, expected
outputs or the secret seed. Its output is untrusted and parsed defensively by
the grader.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from gym.dtypes import dtype_name, same_bits
from gym.tensor_io import read_tensor, write_tensor
from gym.timing import time_runs
from gym.wire import (
    MAX_TEXT,
    CallRecord,
    CallRequest,
    OutputRecord,
    WorkerReport,
    WorkerRequest,
)

REQUEST_FILE = "request.json"
REPORT_FILE = "report.json"
CURRENT_CALL_FILE = "current_call"


def _text(error: BaseException) -> str:
    """The traceback without the worker's and importlib's own frames."""
    summary = traceback.TracebackException.from_exception(error)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if frame.filename != __file__ and not frame.filename.startswith("<frozen")]
    )
    return "".join(summary.format())[-MAX_TEXT:]


def _write(path: Path, model: Any) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(model.model_dump_json())
    temporary.replace(path)


def import_submission(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("submission", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "kernel", None)):
        raise AttributeError("the submission defines no function `kernel(...)`")
    return module


def load_args(in_dir: Path, call: CallRequest, device: torch.device) -> list[tuple[str, Any]]:
    args: list[tuple[str, Any]] = []
    for arg in call.args:
        if arg.tensor is not None:
            args.append((arg.name, read_tensor(in_dir, arg.tensor).to(device)))
        else:
            args.append((arg.name, arg.value))
    return args


def fresh(args: list[tuple[str, Any]]) -> list[Any]:
    return [value.clone() if isinstance(value, torch.Tensor) else value for _, value in args]


def describe_output(value: Any, out_dir: Path, prefix: str) -> OutputRecord:
    kind = type(value)
    record = OutputRecord(python_type=f"{kind.__module__}.{kind.__qualname__}", exact_tensor=kind is torch.Tensor)
    if isinstance(value, torch.Tensor):
        record.dtype = dtype_name(value.dtype)
        record.shape = list(value.shape)
        record.device = value.device.type
        record.strides = list(value.stride())
    if record.exact_tensor:
        record.data = write_tensor(out_dir, f"{prefix}.bin", value)
    return record


def run_call(module: ModuleType, in_dir: Path, out_dir: Path, call: CallRequest, device: torch.device) -> CallRecord:
    args = load_args(in_dir, call, device)
    given = fresh(args)
    try:
        start = time.perf_counter()
        result = module.kernel(*given)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    except BaseException as error:  # noqa: BLE001 - the submission may raise anything, SystemExit included
        return CallRecord(id=call.id, ok=False, error_type=type(error).__name__, error=_text(error))
    mutated = [
        name
        for (name, original), passed in zip(args, given)
        if isinstance(original, torch.Tensor) and not (isinstance(passed, torch.Tensor) and same_bits(passed, original))
    ]
    if isinstance(result, (tuple, list)):
        container = type(result).__name__
        items = list(result)
    elif isinstance(result, torch.Tensor):
        container, items = "tensor", [result]
    else:
        container, items = f"{type(result).__module__}.{type(result).__qualname__}", []
    outputs = [describe_output(item, out_dir, f"call{call.id}_out{index}") for index, item in enumerate(items[:64])]
    return CallRecord(id=call.id, ok=True, container=container, outputs=outputs, inputs_mutated=mutated, seconds=seconds)


def main(in_dir: Path, out_dir: Path) -> int:
    request = WorkerRequest.model_validate_json((in_dir / REQUEST_FILE).read_text())
    device = torch.device(request.device)
    report = WorkerReport(phase="import", torch_version=torch.__version__)
    try:
        import triton

        report.triton_version = triton.__version__
    except Exception:  # noqa: BLE001 - reported as missing
        report.triton_version = None
    report.device_name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu (Triton interpreter)"
    try:
        module = import_submission(in_dir / request.submission)
    except BaseException as error:  # noqa: BLE001
        report.import_error_type = type(error).__name__
        report.import_error = _text(error)
        _write(out_dir / REPORT_FILE, report)
        return 0
    report.phase = "calls"
    for call in request.calls:
        (out_dir / CURRENT_CALL_FILE).write_text(str(call.id))
        _write(out_dir / f"call{call.id}.json", run_call(module, in_dir, out_dir, call, device))
    if request.timing is not None:
        report.phase = "timing"
        (out_dir / CURRENT_CALL_FILE).write_text("timing")
        call = next(c for c in request.calls if c.id == request.timing.call_id)
        args = load_args(in_dir, call, device)
        try:
            report.timing_seconds = time_runs(lambda: module.kernel(*fresh(args)), device, request.timing.reps)
        except BaseException as error:  # noqa: BLE001
            report.timing_error = _text(error)
    report.phase = "done"
    _write(out_dir / REPORT_FILE, report)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python -m gym.worker IN_DIR OUT_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
