"""The submission's process: runs one submission on the inputs of one grade, nothing else.

Forked by the witness (`gym.worker.witness.serve`, from the entry point `gym.worker.__main__`),
`main` reads `IN_DIR/request.json` and the input tensors, imports the submission
from its file, and makes every requested call (in the order given, which the
grader shuffles) on fresh clones of that call's inputs. For each call it
poisons memory the kernel might reuse, times the call with timers captured
before the submission was imported, records the torch ops that ran and the
Triton kernels that launched, checks for mutated inputs and threads left
running, and writes a `CallRecord` plus the output tensors. At the end, after
a device-wide sync, it re-checks that no output changed after its call
returned, then writes `report.json`.

It never sees reference code, expected outputs or the secret seed. Everything
it writes is untrusted and parsed defensively by the grader.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import hashlib
import importlib.util
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from . import audit_hooks as worker_audit_hooks
from . import helion_dsl as worker_helion
from . import launched_modules
from . import module_form as worker_module_form
from . import op_trace as worker_op_trace
from . import tape as worker_tape
from . import timer as worker_timer
from . import triton_share as worker_triton_share
from .dtypes import dtype_name, is_dense, same_bits
from .interpreter import shim as interpreter_shim
from .op_trace import (
    STRAY,
    OpTrace,
    install_hidden_launch_tripwire,
    install_host_bridge_tripwire,
    install_launch_hook,
    install_mode_tripwire,
    install_thread_hook,
    take_launches,
    traced,
)
from .protocol import (
    CURRENT_CALL_FILE,
    MAX_TEXT,
    REPORT_FILE,
    REQUEST_FILE,
    CallRecord,
    CallRequest,
    ExitCode,
    ModuleForm,
    OutputRecord,
    WorkerReport,
    WorkerRequest,
    call_record_file,
)
from .tensor_io import read_tensor, write_tensor

# Captured before any submission code runs: patching time.perf_counter later changes nothing here.
_now = worker_timer.now
CallTimer = worker_timer.CallTimer
timed_call = worker_timer.timed_call


class ForgedRecord(Exception):
    """A file the worker was about to write already existed: someone else wrote it."""


def _text(error: BaseException) -> str:
    """The traceback without the worker's and importlib's own frames."""
    summary = traceback.TracebackException.from_exception(error)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if frame.filename != __file__ and not frame.filename.startswith("<frozen")]
    )
    return "".join(summary.format())[-MAX_TEXT:]


# sha256 of every record and output file the worker wrote, by name (goes into the report).
_WRITTEN: dict[str, str] = {}


def _write_new(path: Path, data: bytes) -> None:
    """Create `path` exclusively and remember its hash; ForgedRecord when it already exists."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ForgedRecord(path.name) from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    _WRITTEN[path.name] = hashlib.sha256(data).hexdigest()


def _fingerprint() -> dict[str, int]:
    """Identities of everything the worker relies on: its own globals, its helper
    modules, its trace classes, the timers and the thread entry points. Compared
    after every call, a change means the submission patched the grader."""
    watched: dict[str, int] = {}
    # Every module of the worker package loaded so far (helpers, interpreter fixes, the tape).
    package = __package__ or "gym.worker"
    helpers = [module for name, module in sorted(sys.modules.items()) if name.startswith(package + ".") and module is not None]
    for module in (sys.modules[__name__], *helpers):
        for name, value in vars(module).items():
            watched[f"{module.__name__}.{name}"] = id(value)
    for cls in (
        OpTrace,
        worker_op_trace.ForwardingTrace,
        worker_op_trace.traced,
        worker_timer.CallTimer,
        worker_audit_hooks._Setup,
        worker_module_form.ModuleEntry,
        worker_tape.TapeRecorder,
        Entry,
        *OpTrace.__mro__[1:-1],
    ):
        for name, value in vars(cls).items():
            watched[f"{cls.__qualname__}.{name}"] = id(value)
    for owner, name in (
        (time, "perf_counter"),
        (torch.cuda, "synchronize"),
        (torch.cuda, "Event"),
        (threading, "_start_new_thread"),
        (_thread, "start_new_thread"),
    ):
        watched[f"{owner.__name__}.{name}"] = id(getattr(owner, name, None))
    # Everything the launch hook and tripwires patched into torch and Triton (restoring one is tampering too).
    watched.update(worker_op_trace.hook_identities())
    # By content: the audit hooks' cache of who a file belongs to must still say what its rules say.
    watched["audit_hooks._KINDS"] = worker_audit_hooks.cache_consistent()
    # Modes left on between calls would run the submission's code whenever the worker calls torch.
    watched["torch.function_mode_stack"] = int(torch._C._len_torch_function_stack())
    watched["torch.dispatch_mode_stack"] = int(torch._C._len_torch_dispatch_stack())
    watched.update(worker_audit_hooks.import_guard_identities())
    for module_name, name, _ in worker_audit_hooks.GUARDED_TORCH:
        guarded = sys.modules.get(module_name)
        watched[f"{module_name}.{name}"] = id(getattr(guarded, name, None))
    return watched


def _tampered(before: dict[str, int]) -> list[str]:
    after = _fingerprint()
    return sorted(name for name, identity in before.items() if after.get(name) != identity)


_sync = worker_timer.synchronize


def import_submission(path: Path, module_form: ModuleForm | None = None) -> dict[str, Any]:
    """Import the submission; its namespace (the module's own dict, captured before any of its code
    ran, so a module `__getattr__` or a replaced module class is never consulted)."""
    spec = importlib.util.spec_from_file_location("submission", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    namespace: dict[str, Any] = module.__dict__
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    if not callable(namespace.get("kernel")) and (module_form is None or worker_module_form.CLASS_NAME not in namespace):
        also = f" nor `class {worker_module_form.CLASS_NAME}(nn.Module)`" if module_form is not None else ""
        raise AttributeError(f"the submission defines no function `kernel(...)`{also}")
    return namespace


class Entry:
    """What a call runs: the submission's `kernel(*args)`, or (KernelBench tasks) a ModelNew's forward.

    The entry point is looked up once, in the module's own dict, right after the import; nothing
    of the submission's is consulted again between calls."""

    def __init__(self, namespace: dict[str, Any], request: WorkerRequest, device: torch.device) -> None:
        self.kernel: Any = namespace.get("kernel")
        self.models: worker_module_form.ModuleEntry | None = None
        form = request.module_form
        if form is not None and not callable(self.kernel):
            self.models = worker_module_form.ModuleEntry(namespace, form.forward_count, form.state_keys, device)

    def prepare(self, call: CallRequest, given: list[Any]) -> tuple[Any, list[tuple[str, torch.Tensor]]]:
        """The zero-argument call to time (ModelNew: loaded with the call's state first, untimed), and
        the tensors that hold the call's inputs, by parameter or state name (for the tape)."""
        names = [arg.name for arg in call.args]
        if self.models is None:
            kernel = self.kernel
            inputs = [(name, value) for name, value in zip(names, given) if type(value) is torch.Tensor]
            return (lambda: kernel(*given)), inputs
        return self.models.prepare(call.init_inputs or "[]", given, names)

    def build_all(self, request: WorkerRequest) -> None:
        """ModelNew only: build every model the calls need now, before any call's inputs exist in
        this process (a constructor never sees them), and check the first one's state names, so a
        mismatch is a compile error naming them rather than a failure of every call."""
        if self.models is None:
            return
        seen: list[str] = []
        for call in [*request.warmups, *request.calls]:
            init = call.init_inputs or "[]"
            if init not in seen:
                seen.append(init)
        for init in seen:
            self.models.build(init)
        calls = request.warmups or request.calls
        if calls:
            self.models.check_first(calls[0])


# Input tensors by file name: calls that share an input file (repeats, late calls) read it once.
# The kernel never sees these: it gets copies (fresh), and these originals check for mutation.
_LOADED: dict[str, torch.Tensor] = {}


def load_args(in_dir: Path, call: CallRequest, device: torch.device) -> list[tuple[str, Any]]:
    args: list[tuple[str, Any]] = []
    for arg in call.args:
        if arg.tensor is not None:
            loaded = _LOADED.get(arg.tensor.file)
            if loaded is None:
                loaded = _LOADED[arg.tensor.file] = read_tensor(in_dir, arg.tensor).to(device)
            args.append((arg.name, loaded))
        else:
            args.append((arg.name, arg.value))
    return args


# One storage per (parameter, layout): every call's copy of that argument lives at the same address.
_ARG_STORAGE: dict[tuple[Any, ...], torch.Tensor] = {}


def _at_shared_address(name: str, value: torch.Tensor) -> torch.Tensor:
    """A new tensor object holding `value`'s bits at the address every earlier call's `name` of
    this layout had: a result cached by address (data_ptr) then meets different data there."""
    key = (name, tuple(value.shape), tuple(value.stride()), value.dtype, value.device, value.storage_offset())
    storage = _ARG_STORAGE.get(key)
    if storage is None or storage.untyped_storage().nbytes() < value.untyped_storage().nbytes():
        storage = _ARG_STORAGE[key] = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)
    copy = torch.empty(0, dtype=value.dtype, device=value.device).set_(storage.untyped_storage(), storage.storage_offset(), value.shape, value.stride())
    copy.copy_(value)
    return copy


def fresh(args: list[tuple[str, Any]]) -> list[Any]:
    """The arguments as handed to the kernel: new tensor objects with the call's bits (the
    originals stay untouched, to check for mutation), each at its parameter's shared address."""
    return [_at_shared_address(name, value) if isinstance(value, torch.Tensor) else value for name, value in args]


def poison(sizes: list[int], device: torch.device) -> None:
    """Fill and free blocks the size of the expected outputs, so a `torch.empty`
    the kernel never writes holds random bytes, not a previous answer (as in the
    witness's replay, gym.worker.tape_replay.Fill: no fill tells a call from its replay)."""
    generator = torch.Generator(device=device).manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    blocks = [torch.randint(-(2**31), 2**31 - 1, (max(1, size // 4),), dtype=torch.int32, device=device, generator=generator) for size in sizes]
    del blocks


def describe_output(value: Any, out_dir: Path, prefix: str) -> tuple[OutputRecord, torch.Tensor | None]:
    """The record of one returned value, and the snapshot written for exact tensors. Anything that
    is not exactly a torch.Tensor is only named: none of its methods or attributes is touched
    (a subclass's would be the submission's code running after the call)."""
    kind = type(value)
    record = OutputRecord(python_type=f"{kind.__module__}.{kind.__qualname__}", exact_tensor=kind is torch.Tensor)
    snapshot = None
    if record.exact_tensor:
        # Unbound methods: an exact tensor may still carry instance attributes shadowing them.
        record.dtype = dtype_name(value.dtype)
        record.shape = list(value.shape)
        record.device = value.device.type
        record.device_index = value.device.index
        record.strides = list(torch.Tensor.stride(value))
        record.dense = is_dense(value)
        snapshot = clean(value).to("cpu", copy=True)
        path = out_dir / f"{prefix}.bin"
        if path.exists():
            raise ForgedRecord(path.name)
        record.data = write_tensor(out_dir, path.name, snapshot)
        _WRITTEN[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return record, snapshot


def clean(tensor: torch.Tensor) -> torch.Tensor:
    """A fresh alias of an exact tensor's memory, without the instance attributes the submission may
    have hung on the object (a planted `contiguous` or `view` would run when the worker calls it)."""
    return torch.Tensor.detach(tensor)


def mutated_inputs(args: list[tuple[str, Any]], given: list[Any]) -> list[str]:
    """Parameters whose tensor, as handed to the kernel, no longer matches the original bits."""
    return [
        name
        for (name, original), passed in zip(args, given)
        if isinstance(original, torch.Tensor) and not (type(passed) is torch.Tensor and same_bits(clean(passed), original))
    ]


def live_threads() -> set[int]:
    """Idents of the threads running Python code now (from the interpreter itself, not from
    Thread objects, whose methods a subclass could override)."""
    return set(sys._current_frames())


def threads_started(before: set[int]) -> list[str]:
    """Names of threads alive now that were not in `before`."""
    names = []
    for ident in sorted(live_threads() - before):
        thread = threading._active.get(ident)  # type: ignore[attr-defined]
        if type(thread) is threading.Thread:
            names.append(str(thread._name))  # type: ignore[attr-defined]
        else:
            names.append(f"thread {ident}" + (f" ({type(thread).__qualname__})" if thread is not None else ""))
    return names


# Everything handed to the submission or returned by it stays alive until the process ends, so no
# finalizer it planted on one (weakref.finalize, a __del__ in what it hung on a tensor) runs
# between calls, while the worker, not the trace, is in charge.
_HANDED: list[Any] = []


# Address space a job may gain before the worker collects garbage (bytes; the sandbox limits address
# space, and an allocation is counted whether or not it is touched): with collection off, each
# interpreted launch leaves its host copies of the arguments in reference cycles, so a call with a large
# per-call workspace would otherwise exhaust the sandbox's memory within a few hundred calls.
COLLECT_AFTER_BYTES = 512 << 20
_COLLECTED_AT: list[int] = [0]


def _statm() -> int | None:
    try:
        return os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        return None


# Opened by the submission's process as it starts (`main`), before the audit hooks exist: reading it is no
# file opened during a call (and /proc/self resolves when it is opened, so the witness cannot open it for us).
_STATM: list[int | None] = [None]
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _mapped_bytes() -> int:
    descriptor = _STATM[0]
    if descriptor is None:
        return 0
    try:
        return int(os.pread(descriptor, 256, 0).split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


@contextlib.contextmanager
def _collecting(context: Any) -> Iterator[Any]:
    """`context` (the call's op trace), then, when the address space grew past COLLECT_AFTER_BYTES since the
    last collection, a garbage collection inside it, before the clock starts: any finalizer of the
    submission's runs traced as part of this call (its ops judged, its launches on this call's tape),
    never between calls; and the speed that counts is the witness's replay, so it buys no time."""
    with context as entered:
        if _mapped_bytes() - _COLLECTED_AT[0] > COLLECT_AFTER_BYTES:
            gc.collect()
            _COLLECTED_AT[0] = _mapped_bytes()
        yield entered


def run_call(
    entry: Entry, in_dir: Path, out_dir: Path, call: CallRequest, device: torch.device, timer: CallTimer
) -> tuple[CallRecord, list[tuple[Any, torch.Tensor]], worker_tape.CallTape | None]:
    """Make one call; return its record, (live output, snapshot) pairs for the final re-check, and its tape."""
    args = load_args(in_dir, call, device)
    given = fresh(args)
    _HANDED.append(given)
    threads_before = live_threads()
    try:
        prepared, inputs = entry.prepare(call, given)
    except BaseException as error:  # noqa: BLE001 - ModelNew's state loading raised
        return CallRecord(id=call.id, ok=False, error_type=type(error).__name__, error=_text(error)), [], None
    recorder = worker_tape.TapeRecorder(call.id)
    for name, tensor in inputs:
        recorder.add_input(name, tensor)
    poison(call.poison_bytes, device)
    take_launches()
    trace = OpTrace()
    worker_tape.begin(recorder)
    try:
        result, seconds = timed_call(timer, prepared, _collecting(traced(trace)))
    except BaseException as error:  # noqa: BLE001 - the submission may raise anything, SystemExit included
        worker_tape.end()
        return (
            CallRecord(id=call.id, ok=False, error_type=type(error).__name__, error=_text(error), torch_ops=dict(trace.ops), launches=take_launches()),
            [],
            None,
        )
    worker_tape.end()
    _HANDED.append(result)
    # The class's method, never one planted on the recorder (reachable from the submission's process).
    tape = worker_tape.TapeRecorder.finish(recorder, result)
    launches = take_launches()
    new_threads = threads_started(threads_before)
    mutated = mutated_inputs(args, given)
    container, items = container_of(result)
    outputs: list[OutputRecord] = []
    kept: list[tuple[Any, torch.Tensor]] = []
    for index, item in enumerate(items[:64]):
        output, snapshot = describe_output(item, out_dir, f"call{call.id}_out{index}")
        outputs.append(output)
        if snapshot is not None:
            kept.append((item, snapshot))
    record = CallRecord(
        id=call.id,
        ok=True,
        container=container,
        outputs=outputs,
        inputs_mutated=mutated,
        seconds=seconds,
        torch_ops=dict(trace.ops),
        launches=launches,
        new_threads=new_threads,
    )
    return record, kept, tape


def container_of(result: Any) -> tuple[str, list[Any]]:
    """("tensor" | "tuple" | "list" | the type's name, the returned items). Only an exact tuple or
    list is unpacked (a subclass's __iter__ would be the submission's code running after the call)."""
    kind = type(result)
    if kind is tuple or kind is list:
        return kind.__name__, list(result)
    if kind is torch.Tensor:
        return "tensor", [result]
    return f"{kind.__module__}.{kind.__qualname__}", []


def warm_up(entry: Entry, in_dir: Path, call: CallRequest, seconds: float, device: torch.device) -> tuple[CallRecord, int]:
    """Run the warm-up call on fresh clones until `seconds` pass (at least once), traced like
    any call; one record sums what the runs did. A raising kernel stops the warm-up early."""
    args = load_args(in_dir, call, device)
    threads_before = live_threads()
    take_launches()
    trace = OpTrace()
    container = "tensor"
    mutated: set[str] = set()
    failure: list[CallRecord] = []

    def step() -> bool:
        nonlocal container
        given = fresh(args)
        _HANDED.append(given)
        try:
            prepared, inputs = entry.prepare(call, given)
            # A tape nobody replays, so the warm-up's host reads are judged as a call's are (gym.worker.tape).
            recorder = worker_tape.TapeRecorder(call.id)
            for name, tensor in inputs:
                recorder.add_input(name, tensor)
            worker_tape.begin(recorder)
            try:
                with traced(trace):
                    result = prepared()
            finally:
                worker_tape.end()
            _sync(device)
        except BaseException as error:  # noqa: BLE001 - the timed calls will raise it again and say so
            failure.append(
                CallRecord(id=call.id, ok=False, error_type=type(error).__name__, error=_text(error), torch_ops=dict(trace.ops), launches=take_launches())
            )
            return False
        container, _ = container_of(result)
        _HANDED.append(result)
        mutated.update(mutated_inputs(args, given))
        return True

    started = _now()
    runs = worker_timer.warm_up(step, seconds)
    if failure:
        return failure[0], runs
    record = CallRecord(
        id=call.id,
        ok=True,
        container=container,
        inputs_mutated=sorted(mutated),
        seconds=_now() - started,
        torch_ops=dict(trace.ops),
        launches=take_launches(),
        new_threads=threads_started(threads_before),
    )
    return record, runs


def merged(first: CallRecord, second: CallRecord) -> CallRecord:
    """Two warm-up records as one: ops, launches and seconds summed, threads and mutations joined; a failure wins."""
    if not second.ok:
        return second
    ops = dict(first.torch_ops)
    for name, count in second.torch_ops.items():
        ops[name] = ops.get(name, 0) + count
    launches = dict(first.launches)
    for name, count in second.launches.items():
        launches[name] = launches.get(name, 0) + count
    return first.model_copy(
        update={
            "torch_ops": ops,
            "launches": launches,
            "seconds": (first.seconds or 0.0) + (second.seconds or 0.0),
            "inputs_mutated": sorted(set(first.inputs_mutated) | set(second.inputs_mutated)),
            "new_threads": sorted(set(first.new_threads) | set(second.new_threads)),
        }
    )


def profiled_share(entry: Entry, in_dir: Path, call: CallRequest, device: torch.device) -> float | None:
    """One more run of `call`'s inputs under the CUDA profiler (untimed, unchecked): Triton's share
    of its device time. Any failure of the profiler is no figure, never a failed grade."""
    try:
        given = fresh(load_args(in_dir, call, device))
        _HANDED.append(given)
        prepared, _ = entry.prepare(call, given)
        take_launches()
        names: set[str] = set()

        def run() -> Any:
            result = prepared()
            names.update(take_launches())
            return result

        return worker_triton_share.profiled_share(run, names)
    except Exception:  # noqa: BLE001 - an informational figure
        return None


def changed_after_return(kept: dict[int, list[tuple[Any, torch.Tensor]]], device: torch.device) -> list[int]:
    """Calls whose returned tensors no longer hold what they held when the call returned."""
    _sync(device)
    changed = []
    for call_id, pairs in kept.items():
        if any(not same_bits(clean(live).to("cpu"), snapshot) for live, snapshot in pairs):
            changed.append(call_id)
    return changed


def main(in_dir: Path, out_dir: Path) -> int:
    """The submission's process (forked by the witness): import the submission, make every call, report."""
    # No garbage collection from here on: a collection could run a finalizer of the submission's
    # (a __del__ in a reference cycle) anywhere, between calls included. Everything lives until the exit.
    gc.disable()
    _STATM[0] = _statm()
    request = WorkerRequest.model_validate_json((in_dir / REQUEST_FILE).read_text())
    device = torch.device(request.device)
    report = WorkerReport(phase="import", torch_version=torch.__version__)
    import triton

    report.triton_version = triton.__version__
    report.device_name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu (Triton interpreter)"
    install_launch_hook()
    install_thread_hook()
    install_mode_tripwire()
    install_host_bridge_tripwire()
    install_hidden_launch_tripwire()
    if device.type == "cpu":
        interpreter_shim.install()
    # Initialise lazy torch state (thread pools, and what the first dispatch through a
    # mode sets up) before anything is traced or timed.
    with OpTrace():
        torch.ones(64, device=device).add(1)
    timer = CallTimer(device)
    if device.type == "cuda":
        # Kernels must launch on the stream the timer's events are recorded on (a side stream would escape them).
        worker_op_trace.set_expected_stream(torch.cuda.current_stream(device).cuda_stream, device.index or 0)
    if request.dsl == "helion":
        # A compiler, loaded as torch and Triton are: before the audit hooks and the submission.
        worker_helion.prepare(device)
    if request.audit_hooks:
        worker_audit_hooks.install_api_tripwires()
        worker_audit_hooks.install_import_guard()
        # From here on, what the submission asks for is judged by who asked (gym.worker.audit_hooks).
        worker_audit_hooks.set_launch_boundary(worker_op_trace._in_launch.__code__)
        worker_audit_hooks.install(str(in_dir / request.submission))
    fingerprint = _fingerprint()
    threads_before = live_threads()
    trace = OpTrace()
    try:
        with traced(trace):
            namespace = import_submission(in_dir / request.submission, request.module_form)
        if request.dsl == "helion":
            worker_helion.check_configs(namespace)
        entry = Entry(namespace, request, device)
        # ModelNew's constructors run now, before any call's inputs are read: not traced (building nn
        # layers initialises their weights, which the worker overwrites with each call's state); their threads count.
        entry.build_all(request)
    except BaseException as error:  # noqa: BLE001
        report.import_error_type = type(error).__name__
        report.import_error = _text(error)
        report.refused = worker_audit_hooks.take_refused()
        _write_new(out_dir / REPORT_FILE, report.model_dump_json().encode())
        return ExitCode.ok
    report.import_ops = dict(trace.ops)
    report.import_launches = take_launches()
    report.import_threads = threads_started(threads_before)
    report.phase = "calls"
    kept: dict[int, list[tuple[Any, torch.Tensor]]] = {}
    try:
        for warmup in request.warmups:
            record, runs = warm_up(entry, in_dir, warmup, request.warmup_s, device)
            report.warmup = record if report.warmup is None else merged(report.warmup, record)
            report.warmup_runs += runs
            report.tampered = report.tampered or _tampered(fingerprint)
            if not record.ok:
                break
        for call in request.calls:
            (out_dir / CURRENT_CALL_FILE).write_text(str(call.id))
            record, kept[call.id], tape = run_call(entry, in_dir, out_dir, call, device, timer)
            _write_new(out_dir / call_record_file(call.id), record.model_dump_json().encode())
            if tape is not None and request.replay:
                _write_new(out_dir / worker_tape.tape_file(call.id), tape.model_dump_json().encode())
            report.tampered = report.tampered or _tampered(fingerprint)
            if not record.ok:
                # The grade has failed: the rest of the calls would only cost time (report.stopped_at says where).
                report.stopped_at = call.id
                break
        report.changed_after_return = changed_after_return(kept, device)
        if device.type == "cuda" and request.calls and report.stopped_at is None:
            report.triton_time_share = profiled_share(entry, in_dir, request.calls[0], device)
    except ForgedRecord as forged:
        report.forged = forged.args[0]
    report.stray_ops = dict(STRAY.ops)
    try:
        # The sources of jit functions the calls launched from other files (Helion's generated modules).
        launched_modules.write_sources(out_dir, _write_new)
    except ForgedRecord as forged:
        report.forged = forged.args[0]
    report.refused = worker_audit_hooks.take_refused()
    report.tampered = report.tampered or _tampered(fingerprint)
    report.files = dict(_WRITTEN)
    report.phase = "done"
    try:
        _write_new(out_dir / REPORT_FILE, report.model_dump_json().encode())
    except ForgedRecord:
        return ExitCode.forgery
    return ExitCode.ok


def finish(code: int) -> None:
    """Exit now with `code`, skipping the interpreter's teardown (a torch process spends a large
    part of a small job unloading itself): everything the worker writes is already closed, and
    nothing the submission left behind (threads, atexit handlers) gets to run any more."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
