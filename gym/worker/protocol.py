"""The worker protocol: the job's file names, the messages that cross the worker
boundary (as files in the job folder), and the worker's exit codes.

The trusted side writes a `WorkerRequest` (plus input tensors) into the job's
input folder; the worker writes one `CallRecord` per call and a final
`WorkerReport` into the output folder. Everything the worker writes is
untrusted: the grader validates it with these models and never trusts an
exit code or anything the submission printed.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The request the trusted side writes into the job's input folder.
REQUEST_FILE = "request.json"
# The worker's final report, in the output folder.
REPORT_FILE = "report.json"
# The id of the call in progress, rewritten before each call (tells where a dead worker died).
CURRENT_CALL_FILE = "current_call"
# The submission's file name inside the input folder.
SUBMISSION_FILE = "submission.py"
# Longest error text a record carries.
MAX_TEXT = 20_000


def call_record_file(call_id: int) -> str:
    """The record file of call `call_id` in the output folder."""
    return f"call{call_id}.json"


class ExitCode(IntEnum):
    """The worker's exit status. Never trusted on its own: the report decides."""

    # The worker ran to the end (the report says how the submission fared).
    ok = 0
    # Bad command line.
    usage = 2
    # The report file already existed when the worker went to write it: someone else wrote it.
    forgery = 3


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class TensorFile(WireModel):
    # File name inside its folder: letters, digits, '_', '-', '.', no path separators.
    file: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,100}$")
    # Short dtype name, e.g. "float32" (see gym.worker.dtypes).
    dtype: str
    # Size of each dimension.
    shape: list[int]
    # Exact size of the raw little-endian data in bytes.
    nbytes: int = Field(ge=0)


class Arg(WireModel):
    name: str
    # A tensor argument, read from the input folder.
    tensor: TensorFile | None = None
    # A scalar argument (int, float, bool or str).
    value: int | float | bool | str | None = None


class CallRequest(WireModel):
    # Identity of the call; records are keyed by it (ids do not reveal a call's purpose).
    id: int = Field(ge=0)
    args: list[Arg]
    # Sizes of blocks to fill with NaN and free right before the call (the expected outputs' sizes).
    poison_bytes: list[int] = Field(default_factory=list)


class WorkerRequest(WireModel):
    # The submission's file name inside the input folder.
    submission: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,100}$")
    # torch device the inputs are moved to, e.g. "cpu" or "cuda".
    device: str
    # Every call is timed and every output is checked; the order is shuffled by the grader.
    calls: list[CallRequest]
    # Untimed, unchecked calls on inputs of their own before the first call (JIT compile, caches,
    # clocks): repeated on fresh clones for `warmup_s` seconds, at least once.
    warmup: CallRequest | None = None
    warmup_s: float = Field(default=0.0, ge=0, le=10)


class OutputRecord(WireModel):
    # type(value).__module__ + "." + type(value).__qualname__ as the worker saw it.
    python_type: str
    # True only when type(value) is torch.Tensor exactly (no subclass).
    exact_tensor: bool
    dtype: str | None = None
    shape: list[int] | None = None
    device: str | None = None
    strides: list[int] | None = None
    # False when elements overlap or have gaps (e.g. an expanded stride-0 view).
    dense: bool | None = None
    # Data of exact tensors; None for anything else.
    data: TensorFile | None = None


class CallRecord(WireModel):
    id: int = Field(ge=0)
    # False when the call raised.
    ok: bool
    # Exception class name and text (truncated) when the call raised.
    error_type: str | None = Field(default=None, max_length=200)
    error: str | None = Field(default=None, max_length=MAX_TEXT)
    # "tensor", "tuple", "list", or the type name of whatever else came back.
    container: str | None = Field(default=None, max_length=200)
    outputs: list[OutputRecord] = Field(default_factory=list, max_length=64)
    # Parameters whose tensors differ after the call from before it.
    inputs_mutated: list[str] = Field(default_factory=list)
    # Seconds the call took, device-synchronised on both ends, by timers captured before the import.
    seconds: float | None = None
    # aten ops dispatched during the call on the calling thread, by packet name ("aten.mm": 1).
    torch_ops: dict[str, int] = Field(default_factory=dict)
    # Triton kernels launched during the call, by name.
    launches: dict[str, int] = Field(default_factory=dict)
    # Python threads started during the call and still alive after it.
    new_threads: list[str] = Field(default_factory=list)


class WorkerReport(WireModel):
    # How far the worker got.
    phase: Literal["import", "calls", "done"]
    # Why the submission could not be imported (syntax error, missing kernel, ...).
    import_error_type: str | None = Field(default=None, max_length=200)
    import_error: str | None = Field(default=None, max_length=MAX_TEXT)
    # aten ops and Triton launches while the submission was imported.
    import_ops: dict[str, int] = Field(default_factory=dict)
    import_launches: dict[str, int] = Field(default_factory=dict)
    # Calls whose returned tensors changed after the call returned (checked after a device sync).
    changed_after_return: list[int] = Field(default_factory=list)
    # A record file that already existed when the worker went to write it.
    forged: str | None = None
    # Python threads the submission started at import and left running.
    import_threads: list[str] = Field(default_factory=list)
    # aten ops run by submission threads while no call was in progress.
    stray_ops: dict[str, int] = Field(default_factory=dict)
    # The warm-up runs as one record (ops, launches and threads summed over them; `seconds` is
    # their total time; no outputs are kept); None when there was no warm-up.
    warmup: CallRecord | None = None
    # How many warm-up runs were made.
    warmup_runs: int = 0
    # Worker internals (globals, trace classes, timers, thread entry points) found replaced.
    tampered: list[str] = Field(default_factory=list)
    # sha256 of every record and output file the worker wrote, by file name.
    files: dict[str, str] = Field(default_factory=dict)
    # Versions and device the worker ran with.
    torch_version: str | None = None
    triton_version: str | None = None
    device_name: str | None = None
