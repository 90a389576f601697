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
# A warm worker (`--warm`, started ahead of its job) writes this into its output folder once it has
# imported what every job needs; the trusted side removes it before the job starts.
WARM_READY_FILE = ".ready"
WARM_READY_TEXT = "ready"
# The trusted side writes this into a warm worker's input folder after every other job file: the job may start.
WARM_GO_FILE = ".go"
# How often a waiting warm worker looks for the go file, seconds.
WARM_POLL_S = 0.005
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


# A CUDA job's worker sees exactly one GPU (the sandbox exposes only the grade's), so it is always this device there.
WORKER_CUDA_DEVICE = "cuda:0"


def worker_device(device_type: str) -> str:
    """The device string a worker is told to run on: "cpu", or the one GPU it sees."""
    return WORKER_CUDA_DEVICE if device_type == "cuda" else device_type


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


class TensorFile(WireModel):
    file: str = Field(
        pattern=r"^[A-Za-z0-9_.\-]{1,100}$",
        description="File name inside its folder: letters, digits, '_', '-', '.', no path separators.",
    )
    dtype: str = Field(description='Short dtype name, e.g. "float32" (see gym.worker.dtypes).')
    shape: list[int] = Field(description="Size of each dimension.")
    nbytes: int = Field(ge=0, description="Exact size of the raw little-endian data in bytes.")


class Arg(WireModel):
    name: str = Field(description="The kernel parameter this argument binds to.")
    tensor: TensorFile | None = Field(default=None, description="A tensor argument, read from the input folder.")
    value: int | float | bool | str | None = Field(
        default=None,
        description="A scalar argument (int, float, bool or str).",
    )


class CallRequest(WireModel):
    id: int = Field(
        ge=0,
        description="Identity of the call; records are keyed by it (ids do not reveal a call's purpose).",
    )
    args: list[Arg] = Field(description="The call's arguments, in the kernel's parameter order.")
    poison_bytes: list[int] = Field(
        default_factory=list,
        description="Sizes of blocks to fill with NaN and free right before the call (the expected outputs' sizes).",
    )
    init_inputs: str | None = Field(
        default=None,
        max_length=MAX_TEXT,
        description="KernelBench tasks: ModelNew's constructor arguments for this call's shape, as JSON (tuples as {\"tuple\": [...]}).",
    )


class ModuleForm(WireModel):
    """How a KernelBench task's arguments map onto `ModelNew` (gym.worker.module_form)."""

    forward_count: int = Field(ge=0, description="The first this many arguments of a call are ModelNew.forward's inputs.")
    state_keys: list[str] = Field(description="The state_dict names the remaining arguments load into, in order.")


class WorkerRequest(WireModel):
    submission: str = Field(
        pattern=r"^[A-Za-z0-9_.\-]{1,100}$",
        description="The submission's file name inside the input folder.",
    )
    device: str = Field(description='torch device the inputs are moved to, e.g. "cpu" or "cuda".')
    calls: list[CallRequest] = Field(
        description="Every call is timed and every output is checked; the order is shuffled by the grader.",
    )
    module_form: ModuleForm | None = Field(
        default=None,
        description="Set for KernelBench tasks: a submission may define `class ModelNew(nn.Module)` instead of `kernel(...)`.",
    )
    audit_hooks: bool = Field(
        default=True,
        description="Install the run-time audit hooks (gym.worker.audit_hooks); off only to test that the sandbox holds on its own.",
    )
    warmups: list[CallRequest] = Field(
        default_factory=list,
        description=(
            "Untimed, unchecked calls on inputs of their own before the first call (JIT compile, autotuning, caches, "
            "clocks), one per timed shape: each repeated on fresh clones for `warmup_s` seconds, at least once."
        ),
    )
    warmup_s: float = Field(
        default=0.0,
        ge=0,
        le=10,
        description="Seconds to repeat the warm-up call for (it runs at least once).",
    )
    replay: bool = Field(
        default=False,
        description="After the submission's process is gone, the witness replays tapes the trusted side picks (gym.worker.witness).",
    )
    dsl: Literal["triton", "helion"] = Field(
        default="triton",
        description=(
            'The kernel language the submission is written in: "helion" loads Helion before the submission '
            "(gym.worker.helion_dsl) and refuses a Helion kernel that would autotune."
        ),
    )


class OutputRecord(WireModel):
    python_type: str = Field(
        description='type(value).__module__ + "." + type(value).__qualname__ as the worker saw it.',
    )
    exact_tensor: bool = Field(description="True only when type(value) is torch.Tensor exactly (no subclass).")
    dtype: str | None = Field(
        default=None,
        description="The tensor's short dtype name; None for anything that is not a tensor.",
    )
    shape: list[int] | None = Field(
        default=None,
        description="The tensor's size of each dimension; None for anything that is not a tensor.",
    )
    device: str | None = Field(default=None, description="The tensor's device; None for anything that is not a tensor.")
    device_index: int | None = Field(
        default=None,
        description="The tensor's device index (CUDA); None on CPU and for anything that is not a tensor.",
    )
    strides: list[int] | None = Field(
        default=None,
        description="The tensor's strides, in elements; None for anything that is not a tensor.",
    )
    dense: bool | None = Field(
        default=None,
        description="False when elements overlap or have gaps (e.g. an expanded stride-0 view).",
    )
    data: TensorFile | None = Field(default=None, description="Data of exact tensors; None for anything else.")


class CallRecord(WireModel):
    id: int = Field(ge=0, description="The id of the call request this record answers.")
    ok: bool = Field(description="False when the call raised.")
    error_type: str | None = Field(
        default=None,
        max_length=200,
        description="Exception class name when the call raised.",
    )
    error: str | None = Field(
        default=None,
        max_length=MAX_TEXT,
        description="Exception text (truncated) when the call raised.",
    )
    container: str | None = Field(
        default=None,
        max_length=200,
        description='"tensor", "tuple", "list", or the type name of whatever else came back.',
    )
    outputs: list[OutputRecord] = Field(
        default_factory=list,
        max_length=64,
        description="One record per returned value (a tensor, or each item of a tuple/list).",
    )
    inputs_mutated: list[str] = Field(
        default_factory=list,
        description="Parameters whose tensors differ after the call from before it.",
    )
    seconds: float | None = Field(
        default=None,
        description="Seconds the call took, device-synchronised on both ends, by timers captured before the import.",
    )
    torch_ops: dict[str, int] = Field(
        default_factory=dict,
        description='aten ops dispatched during the call on the calling thread, by packet name ("aten.mm": 1).',
    )
    launches: dict[str, int] = Field(
        default_factory=dict,
        description="Triton kernels launched during the call, by name.",
    )
    new_threads: list[str] = Field(
        default_factory=list,
        description="Python threads started during the call and still alive after it.",
    )


class WorkerReport(WireModel):
    phase: Literal["import", "calls", "done"] = Field(description="How far the worker got.")
    import_error_type: str | None = Field(
        default=None,
        max_length=200,
        description=("Exception class name when the submission could not be imported (syntax error, missing kernel, ...)."),
    )
    import_error: str | None = Field(
        default=None,
        max_length=MAX_TEXT,
        description="Why the submission could not be imported (exception text, truncated).",
    )
    import_ops: dict[str, int] = Field(
        default_factory=dict,
        description="aten ops dispatched while the submission was imported.",
    )
    import_launches: dict[str, int] = Field(
        default_factory=dict,
        description="Triton kernels launched while the submission was imported.",
    )
    changed_after_return: list[int] = Field(
        default_factory=list,
        description="Calls whose returned tensors changed after the call returned (checked after a device sync).",
    )
    forged: str | None = Field(
        default=None,
        description="A record file that already existed when the worker went to write it.",
    )
    import_threads: list[str] = Field(
        default_factory=list,
        description="Python threads the submission started at import and left running.",
    )
    stray_ops: dict[str, int] = Field(
        default_factory=dict,
        description="aten ops run by submission threads while no call was in progress.",
    )
    warmup: CallRecord | None = Field(
        default=None,
        description=(
            "The warm-up runs of every warm-up call as one record (ops, launches and threads summed over them; "
            "`seconds` is their total time; no outputs are kept); None when there was no warm-up."
        ),
    )
    warmup_runs: int = Field(default=0, description="How many warm-up runs were made, over every warm-up call.")
    triton_time_share: float | None = Field(
        default=None,
        description="GPU only: Triton kernels' share of the device time of one profiled extra call (gym.worker.triton_share).",
    )
    tampered: list[str] = Field(
        default_factory=list,
        description="Worker internals (globals, trace classes, timers, thread entry points) found replaced.",
    )
    stopped_at: int | None = Field(
        default=None,
        description="The id of the call that raised, after which the worker made no further calls; None when every call ran.",
    )
    refused: list[str] = Field(
        default_factory=list,
        description=(
            'What the audit hooks refused the submission at run time, as "rule: what (file:line)" '
            "(imports, file opens, processes, sockets, ctypes, string exec, introspection, guarded torch APIs)."
        ),
    )
    files: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of every record and output file the worker wrote, by file name.",
    )
    torch_version: str | None = Field(default=None, description="torch version the worker ran with.")
    triton_version: str | None = Field(default=None, description="Triton version the worker ran with.")
    device_name: str | None = Field(default=None, description="Name of the device the worker ran on.")
