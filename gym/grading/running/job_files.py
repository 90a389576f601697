"""The job folder: what the grader writes for the worker, and reading the worker's files back defensively."""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError

from gym.errors import GradeFailure
from gym.grading.planning.plan import CallPlan, Trial, expected_for_call
from gym.sandbox import Job, stage_worker
from gym.schema.result import Dsl, Status
from gym.worker.protocol import REQUEST_FILE, SUBMISSION_FILE, Arg, CallRequest, ModuleForm, OutputRecord, WorkerRequest, worker_device
from gym.worker.tensor_io import TensorReadError, read_tensor, write_tensor
from gym.worker.witness_protocol import KERNELS_FILE

MAX_RECORD_BYTES = 1 << 20


def write_args(folder: Path, prefix: str, args: dict[str, Any], written: dict[int, list[Arg]]) -> list[Arg]:
    """Wire args for one call, tensors as `<prefix>_<name>.bin` in `folder`; identical arg dicts
    (repeats) share their files."""
    if id(args) in written:
        return written[id(args)]
    wire: list[Arg] = []
    for name, value in args.items():
        if isinstance(value, torch.Tensor):
            wire.append(Arg(name=name, tensor=write_tensor(folder, f"{prefix}_{name}.bin", value)))
        else:
            wire.append(Arg(name=name, value=value))
    written[id(args)] = wire
    return wire


def _write_args(in_dir: Path, call_id: int, args: dict[str, Any], written: dict[int, list[Arg]]) -> list[Arg]:
    return write_args(in_dir, f"call{call_id}", args, written)


@dataclass(frozen=True)
class JobCalls:
    """The calls one job makes."""

    # The trials whose calls it makes (every call of each, in the trial's order).
    trials: list[Trial]
    # Seeds the shuffled numbering of the calls (the worker runs them in id order).
    shuffle_seed: int
    # Untimed, unchecked calls on inputs of their own, run before the first (JIT compile, caches); numbered after the trials' calls.
    warmups: list[CallPlan] = field(default_factory=list)


@dataclass(frozen=True)
class JobContents:
    """What write_job puts in a job's input folder: the submission, its calls, and how the worker runs them."""

    # The submission file (copied into the job).
    submission: Path
    # The calls to make.
    calls: JobCalls
    # Seconds the worker repeats each warm-up call for (at least once; the grade's TimingPolicy.warmup_s).
    warmup_s: float = 0.0
    # Install the worker's run-time audit hooks.
    audit_hooks: bool = True
    # KernelBench tasks: how a call's arguments map onto ModelNew (gym.tasks.kernelbench.runtime.module_form); None for our own tasks.
    module_form: ModuleForm | None = None
    # The kernels file's text (gym.grading.intake.kernel_source); with it the witness replays tapes. None: no replay.
    kernels: str | None = None
    # The submission's kernel language (gym.grading.intake.dsl; WorkerRequest.dsl).
    dsl: Dsl = "triton"


def write_job(job: Job, contents: JobContents, stage: bool = True) -> list[tuple[Trial, list[int]]]:
    """Write the request and inputs; return each trial with its call ids.

    Call ids are a shuffled numbering and the worker runs calls in id order,
    so neither the order nor the id tells a correctness call from a timed one.
    `stage=False` when the worker's code is already in the job (a warm worker's).
    """
    trials, kernels = contents.calls.trials, contents.kernels
    shutil.copyfile(contents.submission, job.in_dir / SUBMISSION_FILE)
    if kernels is not None:
        (job.in_dir / KERNELS_FILE).write_text(kernels)
    if stage:
        stage_worker(job.lib_dir)
    plans = [(trial, plan) for trial in trials for plan in trial.calls]
    ids = list(range(len(plans)))
    random.Random(contents.calls.shuffle_seed).shuffle(ids)
    calls: list[CallRequest] = []
    written: dict[int, list[Arg]] = {}
    for call_id, (trial, plan) in zip(ids, plans):
        expected = plan.expected or expected_for_call(trial, plan)
        calls.append(
            CallRequest(
                id=call_id,
                args=_write_args(job.in_dir, call_id, plan.args, written),
                poison_bytes=[e.numel() * e.element_size() for e in expected],
                init_inputs=plan.init_inputs or trial.init_inputs,
            )
        )
    calls.sort(key=lambda call: call.id)
    warmup_calls = [
        CallRequest(id=len(plans) + index, args=_write_args(job.in_dir, len(plans) + index, warmup.args, written), init_inputs=warmup.init_inputs)
        for index, warmup in enumerate(contents.calls.warmups)
    ]
    request = WorkerRequest(
        submission=SUBMISSION_FILE,
        device=worker_device(job.device),
        calls=calls,
        warmups=warmup_calls,
        warmup_s=contents.warmup_s,
        audit_hooks=contents.audit_hooks,
        module_form=contents.module_form,
        replay=kernels is not None,
        dsl=contents.dsl,
    )
    (job.in_dir / REQUEST_FILE).write_text(request.model_dump_json())
    layout: list[tuple[Trial, list[int]]] = []
    position = 0
    for trial in trials:
        layout.append((trial, ids[position : position + len(trial.calls)]))
        position += len(trial.calls)
    return layout


def read_model(path: Path, model: type[Any]) -> Any | None:
    """A record the worker wrote, or None when missing; GradeFailure when malformed."""
    if not path.is_file() or path.is_symlink():
        return None
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise GradeFailure(Status.runtime_error, f"worker record {path.name} is larger than {MAX_RECORD_BYTES} bytes")
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise GradeFailure(
            Status.runtime_error, f"worker record {path.name} is malformed: {error.error_count()} problem(s), first: {error.errors()[0]['msg']}"
        ) from None


def on_device_of(outputs: list[torch.Tensor], expected: list[torch.Tensor]) -> list[torch.Tensor]:
    """The worker's outputs (read back on the CPU) moved to where the expected outputs live.

    The one place both sides of a comparison are put on one device: expected
    outputs, oracles and inputs stay on the grade's device (a GPU), the worker's
    files are read on the CPU, and torch refuses to compare across devices.
    """
    if not expected:
        return outputs
    device = expected[0].device
    return [output if output.device == device else output.to(device) for output in outputs]


def read_outputs(out_dir: Path, outputs: list[OutputRecord]) -> list[torch.Tensor]:
    """The output tensors a call record points to, read defensively (on the CPU)."""
    tensors = []
    for output in outputs:
        if output.data is None:
            raise GradeFailure(Status.runtime_error, "the worker wrote no data for a tensor output")
        try:
            tensors.append(read_tensor(out_dir, output.data))
        except TensorReadError as error:
            raise GradeFailure(Status.runtime_error, f"malformed worker output: {error}") from None
    return tensors
