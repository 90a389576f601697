"""The replayer: the witness's second half, run once the submission's process and everything it
started are gone (gym.worker.witness supervises; this module replays).

For each item the grader chose (`ReplayRequest`), the tape of one call, read from the output folder
where the dead process left it, is replayed (`gym.worker.tape_replay`) with only the file's jit
functions on fresh inputs; every launched specialization is first compiled for a GPU target
(`gym.worker.gpu_compile`) when there is no GPU. Outputs go into the secret folder and the report
(`WitnessReport`) says what ran: ops, launches, timings, atomics, provenance, traffic.
"""

from __future__ import annotations

import hashlib
import os
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from . import timer as worker_timer
from .launched_modules import LAUNCHED_DIR
from .ncu import run_ncu
from .protocol import MAX_TEXT, OutputRecord, WorkerRequest
from .tape import CallTape, LaunchStep, tape_file
from .tape_replay import ReplayError, TapeReplay, kernel_named, load_kernels
from .tensor_io import read_tensor, write_tensor
from .traffic import TrafficCounts
from .triton_share import profile_kernels
from .witness_protocol import (
    KERNELS_FILE,
    REPLAY_DIR,
    KernelRun,
    ReplayItem,
    ReplayRecord,
    ReplayRequest,
    WitnessReport,
)

# Largest tape the witness reads, bytes.
MAX_TAPE_BYTES = 64 << 20


def _text(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()[-MAX_TEXT:]


class Kernels:
    """The kernels file, loaded compiled (without a GPU: for the compile check) and, once the
    interpreter's fixes are in, for the replay (interpreted on CPU)."""

    def __init__(self, path: Path, device: torch.device, compile_target: str | None, launched: Path | None = None) -> None:
        self.path = path
        self.device = device
        # The staged launched modules (gym.worker.launched_modules), bound on the kernels module.
        self.launched = launched
        self.compiled: ModuleType | None = load_kernels(path, "kgym_kernels_gpu", interpret=False, launched=launched) if compile_target else None
        self.target = compile_target
        self.seen: set[str] = set()
        self._replayed: ModuleType | None = None
        # Kernels already run once in this process (the interpreter rewrites each on its first launch).
        self.warm: set[str] = set()

    @property
    def replayed(self) -> ModuleType:
        if self._replayed is None:
            self._replayed = load_kernels(self.path, "kgym_kernels", interpret=self.device.type == "cpu", launched=self.launched)
        return self._replayed


def compile_errors(kernels: Kernels, replay: TapeReplay) -> list[str]:
    """Each specialization the tape launches, compiled for the GPU target (a dry run of the tape:
    its ops run, its launches are compiled, not run); Triton's refusals."""
    from .gpu_compile import compile_for_gpu

    if kernels.compiled is None or kernels.target is None:
        return []
    compiled, target = kernels.compiled, kernels.target
    errors: list[str] = []

    def check(step: LaunchStep, args: list[Any], kwargs: dict[str, Any]) -> None:
        try:
            # The file's function by name: whether it is the one the call ran (its code identity) is the
            # replay's question; a compile error is reported first, as the construct Triton refuses.
            compile_for_gpu(kernel_named(compiled, step.kernel), target, args, kwargs, kernels.seen)
        except ReplayError:
            raise
        except Exception as error:  # noqa: BLE001 - Triton's compile errors have no common base
            errors.append(f"{step.kernel}: {_text(error)}")

    replay.dry_run(check)
    return errors


def _read_tape(out_dir: Path, call_id: int) -> CallTape:
    path = out_dir / tape_file(call_id)
    if not path.is_file() or path.is_symlink():
        raise ReplayError("the call left no tape")
    if path.stat().st_size > MAX_TAPE_BYTES:
        raise ReplayError(f"the call's tape is larger than {MAX_TAPE_BYTES} bytes")
    try:
        tape = CallTape.model_validate_json(path.read_bytes())
    except ValueError as error:
        raise ReplayError(f"the call's tape is malformed: {str(error)[:300]}") from None
    if tape.call != call_id:
        raise ReplayError("the call's tape is another call's")
    return tape


# Atomic operations the interpreter executed in this process (`count_atomics`); None on a GPU.
ATOMICS_RAN: list[int] | None = None


def count_atomics() -> None:
    """Count every atomic the interpreter executes from now on (the witness's own observation of whether a
    replay's kernels used atomics, whose order may differ run to run)."""
    global ATOMICS_RAN
    from triton.runtime import interpreter

    if ATOMICS_RAN is not None:
        return
    ATOMICS_RAN = ran = [0]
    builder = interpreter.InterpreterBuilder
    for name in ("create_atomic_rmw", "create_atomic_cas"):
        original = getattr(builder, name)

        def counted(*args: Any, _original: Any = original) -> Any:
            ran[0] += 1
            return _original(*args)

        setattr(builder, name, counted)


def uses_atomics(kernel: Any, module: ModuleType, depth: int = 0) -> bool:
    """Whether a jit function's code, or a jit function of `module` it names, names an atomic operation
    (GPU replays are compiled: there the code is what the witness can read)."""
    from triton.runtime.jit import KernelInterface

    code = getattr(getattr(kernel, "fn", None), "__code__", None)
    if code is None or depth > 8:
        return False
    if any(name.startswith("atomic_") for name in code.co_names):
        return True
    helpers = [vars(module).get(name) for name in code.co_names]
    return any(uses_atomics(helper, module, depth + 1) for helper in helpers if isinstance(helper, KernelInterface) and helper is not kernel)


def private_triton_cache() -> Path:
    """Point Triton's caches at a new folder only the witness knows (made now, when nothing the
    submission started is alive): nothing it compiled or planted in the job's cache is read here."""
    import tempfile

    from triton import knobs

    folder = Path(tempfile.mkdtemp(prefix="kgym-witness-"))
    for name in ("dir", "dump_dir", "override_dir"):
        if hasattr(knobs.cache, name):
            setattr(knobs.cache, name, str(folder / name))
    os.environ["TRITON_CACHE_DIR"] = str(folder / "dir")
    return folder


def replay_all(request: WorkerRequest, replay_request: ReplayRequest, in_dir: Path, out_dir: Path, folder: Path) -> WitnessReport:
    """Compile-check every item's launches, then replay every item; the report (outputs written into `folder`).

    The compile check runs first, before the interpreter's fixes are installed (they patch the
    Triton language for interpreted launches, which the compiler must not see)."""
    device = torch.device(request.device)
    report = WitnessReport(submission_exit=0)
    private_triton_cache()
    try:
        launched = in_dir / REPLAY_DIR / LAUNCHED_DIR
        kernels = Kernels(in_dir / KERNELS_FILE, device, replay_request.compile_target if device.type == "cpu" else None, launched)
    except Exception as error:  # noqa: BLE001 - the file's own module-level code failed
        report.error = f"the file's jit functions could not be loaded on their own: {_text(error)}"
        return report
    replay_dir = in_dir / REPLAY_DIR
    prepared: list[tuple[ReplayItem, TapeReplay | ReplayRecord]] = []
    for item in replay_request.items:
        try:
            tape = _read_tape(out_dir, item.tape)
            inputs = {arg.name: read_tensor(replay_dir, arg.tensor).to(device) for arg in item.args if arg.tensor is not None}
            replay = TapeReplay(tape, device, inputs, replay_request.memory_bytes)
            errors = compile_errors(kernels, replay)
        except Exception as error:  # noqa: BLE001 - whatever the tape or its ops raised is the record's error
            prepared.append((item, ReplayRecord(id=item.id, ok=False, error=_text(error))))
            continue
        if errors:
            report.compile_errors.extend(error for error in errors if error not in report.compile_errors)
            prepared.append((item, ReplayRecord(id=item.id, ok=False, error="; ".join(errors)[:MAX_TEXT])))
            continue
        prepared.append((item, replay))
    if device.type == "cpu":
        from .interpreter import shim as interpreter_shim

        interpreter_shim.install()
        count_atomics()
    try:
        kernels.replayed  # noqa: B018 - loaded now, after the interpreter's fixes, as the submission's was
    except Exception as error:  # noqa: BLE001
        report.error = f"the file's jit functions could not be loaded on their own: {_text(error)}"
        return report
    timer = worker_timer.CallTimer(device)
    # Untimed items first: they run each kernel once, so a timed replay does not pay the first launch.
    prepared.sort(key=lambda pair: pair[0].timed)
    for item, ready in prepared:
        record = ready if isinstance(ready, ReplayRecord) else replay_one(item, ready, kernels, folder, device, timer, report, replay_request)
        report.records.append(record)
    if device.type != "cpu":
        _profile_with_ncu(prepared, report, in_dir, out_dir)
        _count_on_cpu(prepared, report, kernels)
    return report


def _profile_with_ncu(prepared: list[tuple[ReplayItem, TapeReplay | ReplayRecord]], report: WitnessReport, in_dir: Path, out_dir: Path) -> None:
    """On a GPU: each ncu item replayed once more by a child process under Nsight Compute (gym.worker.ncu)."""
    records = {record.id: record for record in report.records}
    for item, ready in prepared:
        record = records.get(item.id)
        if not item.ncu or record is None or not record.ok or not isinstance(ready, TapeReplay):
            continue
        try:
            record.ncu_memory_pct, record.ncu_compute_pct, record.ncu_note = run_ncu(in_dir, out_dir, item.id, set(record.launched))
        except Exception as error:  # noqa: BLE001 - a failed profile costs the grade its figures, never its verdict
            record.ncu_note = f"ncu failed: {_text(error)}"[:MAX_TEXT]


def count_traffic(replay: TapeReplay, interpreted: ModuleType) -> tuple[TrafficCounts | None, str | None]:
    """The counted replay of `replay`'s tape with the interpreted kernels (counts, or why there are none)."""
    try:
        counter = replay.count(interpreted, lambda: None)
        return counter.counts(torch_ops=replay.compute_ops()), None
    except Exception as error:  # noqa: BLE001 - a failed count costs the grade its figures, never its verdict
        return None, _text(error)


def _count_on_cpu(prepared: list[tuple[ReplayItem, TapeReplay | ReplayRecord]], report: WitnessReport, kernels: Kernels) -> None:
    """On a GPU: each counted item once more on the CPU, interpreted (after every GPU replay: the
    interpreter's fixes must not reach a compiled launch)."""
    wanted = [(item, ready) for item, ready in prepared if item.count and isinstance(ready, TapeReplay)]
    records = {record.id: record for record in report.records}
    if not wanted:
        return
    from .interpreter import shim as interpreter_shim

    try:
        interpreter_shim.install()
        interpreted = load_kernels(kernels.path, "kgym_kernels_counted", interpret=True, launched=kernels.launched)
    except Exception as error:  # noqa: BLE001
        for item, _ in wanted:
            if item.id in records:
                records[item.id].traffic_error = f"the kernels could not be loaded interpreted: {_text(error)}"
        return
    cpu = torch.device("cpu")
    for item, ready in wanted:
        record = records.get(item.id)
        if record is None or not record.ok:
            continue
        try:
            on_cpu = TapeReplay(ready.tape, cpu, {name: value.to(cpu) for name, value in ready.inputs.items()})
        except Exception as error:  # noqa: BLE001
            record.traffic_error = _text(error)
            continue
        record.traffic, record.traffic_error = count_traffic(on_cpu, interpreted)


def replay_one(
    item: ReplayItem,
    replay: TapeReplay,
    kernels: Kernels,
    folder: Path,
    device: torch.device,
    timer: worker_timer.CallTimer,
    report: WitnessReport,
    settings: ReplayRequest,
) -> ReplayRecord:
    try:

        def run() -> list[torch.Tensor]:
            return replay.run(kernels.replayed, lambda: worker_timer.synchronize(device))

        seconds, run_seconds = None, []
        launched = {step.kernel for step in replay.tape.steps if isinstance(step, LaunchStep)}
        atomics_before = ATOMICS_RAN[0] if ATOMICS_RAN is not None else 0
        if item.timed:
            if settings.warmup or not launched <= kernels.warm:
                run()
                replay.reset()
            outputs, seconds = worker_timer.timed_call(timer, run)
            run_seconds = [seconds]
            # The first run's outputs are judged. `speed_runs` runs are the speed the grade reports;
            # runs go on (up to `timed_runs`) only while the fastest is above the item's `enough_s`.
            speed_runs = item.speed_runs or settings.speed_runs
            for _ in range(max(settings.timed_runs, speed_runs) - 1):
                if len(run_seconds) >= speed_runs and item.enough_s is not None and seconds <= item.enough_s:
                    break
                replay.reset()
                run_seconds.append(worker_timer.timed_call(timer, run)[1])
                seconds = min(run_seconds)
        else:
            outputs = run()
        kernels.warm |= launched
        if ATOMICS_RAN is not None:
            atomics = ATOMICS_RAN[0] > atomics_before
        else:
            atomics = any(uses_atomics(kernel_named(kernels.replayed, name), kernels.replayed) for name in launched)
        records = [_write_output(folder, f"r{item.id}_out{index}.bin", output, report) for index, output in enumerate(outputs[:64])]
        ops, launches, mutated, anchors = dict(replay.ops), replay.launches, replay.mutated(), list(replay.anchor_calls[:4096])
        repeats = []
        for repeat in range(item.repeats):
            replay.reset()
            again = run()
            repeats.append([_write_output(folder, f"r{item.id}_rep{repeat}_out{index}.bin", output, report) for index, output in enumerate(again[:64])])
        record = ReplayRecord(
            id=item.id,
            ok=True,
            outputs=records,
            repeat_outputs=repeats,
            seconds=seconds,
            timed_runs=len(run_seconds),
            run_seconds=run_seconds,
            ops=ops,
            atomics=atomics,
            anchor_calls=anchors,
            launches=launches,
            inputs_mutated=mutated,
            launched=sorted(name.rpartition(".")[2] for name in launched)[:256],
        )
        if item.provenance:
            torch_outputs, masks = replay.provenance()
            record.provenance_outputs = [
                _write_output(folder, f"r{item.id}_torch{index}.bin", output, report) for index, output in enumerate(torch_outputs[:64])
            ]
            record.provenance_masks = [_write_output(folder, f"r{item.id}_made{index}.bin", mask, report) for index, mask in enumerate(masks[:64])]
        if item.profile and device.type == "cuda":
            replay.reset()
            record.kernels = [KernelRun(name=name[:2000], calls=calls, device_us=us) for name, calls, us in profile_kernels(run)[:256]]
        if item.count and device.type == "cpu":
            record.traffic, record.traffic_error = count_traffic(replay, kernels.replayed)
        return record
    except Exception as error:  # noqa: BLE001 - whatever the replay raised is the record's error
        return ReplayRecord(id=item.id, ok=False, error=_text(error))


def _write_output(folder: Path, name: str, tensor: torch.Tensor, report: WitnessReport) -> OutputRecord:
    from .dtypes import dtype_name

    snapshot: Any = tensor.detach().to("cpu", copy=True)
    meta = write_tensor(folder, name, snapshot)
    report.files[name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    return OutputRecord(
        python_type="torch.Tensor",
        exact_tensor=True,
        dtype=dtype_name(tensor.dtype),
        shape=list(tensor.shape),
        device=tensor.device.type,
        device_index=tensor.device.index,
        strides=list(tensor.stride()),
        data=meta,
    )
