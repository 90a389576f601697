"""Worker-side evidence of real work: which torch ops ran and which Triton kernels launched.

`OpTrace` is a TorchDispatchMode that counts every aten op dispatched on the
calling thread. TorchDispatchMode is per thread, so `install_thread_hook()`
makes every thread the submission starts (through `threading` or the raw
`_thread` API) run under a `ForwardingTrace` that counts into whatever trace is
active at the moment (the current call's, the import's, or the stray trace
between calls). `install_launch_hook()` counts Triton launches by kernel name
where they really happen: in the GPU backends' launchers (so `kernel[grid](...)`,
a precompiled `CompiledKernel` launched with `compiled[grid](...)` or
`compiled.run(...)`, and the autotuner all count) and, under the interpreter, in
`InterpretedFunction.run`; it also records a launch on another stream or device
than the timed one as the pseudo-op `kgym.side_stream_launch`.
`install_mode_tripwire()` counts attempts to pop or disable dispatch modes as
the pseudo-op `kgym.dispatch_mode_disabled`, and `install_host_bridge_tripwire()`
counts host reads of tensor data (`kgym.tensor_data_to_host`) except Triton's
own, inside a launch or a host-side TMA descriptor's construction. A host read
the policy allows (`.item()` or `.tolist()` of an integer tensor a launch of the
call was given: a count a kernel wrote) is counted as `kgym.host_read` instead
and taped, so the witness reads its own buffer there. Every
attribute patched here is listed by `hook_identities()` for the worker's
tamper fingerprint. The grader, not the worker, decides which ops were allowed.
"""

from __future__ import annotations

import _thread
import importlib
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import audit_hooks as worker_audit_hooks
from . import launched_modules
from . import tape as worker_tape
from .torch_policy import (
    DISABLED_OP,
    HIDDEN_LAUNCH_ENTRIES,
    HIDDEN_LAUNCH_OP,
    HOST_BRIDGE_OP,
    HOST_READ_OP,
    HOST_READ_PACKET,
    RUNTIME_HOST_BRIDGES,
    SIDE_STREAM_OP,
)

_LAUNCHES: Counter[str] = Counter()
_LOCK = threading.Lock()
# Traces in force, innermost last; ops of submission threads go to the innermost one.
_ACTIVE: list[OpTrace] = []
# Set while one of our own traces is being exited (its own pop is not an attack).
_OWN_EXIT = threading.local()
# Set while `Tensor.tolist` reads a tensor whose values were allowed as host reads all at once.
_HOST_READ = threading.local()
# Depth of Triton launches (and TMA descriptor constructions) on this thread: Triton itself
# reads pointers and data there, which the host bridge tripwire lets through.
_IN_LAUNCH = threading.local()
# Depth of a trusted compiler's lowering on this thread (`compiling`).
_COMPILING = threading.local()
# torch's C getter of Tensor.is_meta (a subclass cannot override what it reads).
_IS_META: Any = torch._C.TensorBase.is_meta
# Every (owner, attribute) patched by an install_* function, in order (see hook_identities()).
_PATCHED: list[tuple[Any, str]] = []
# The stream and device the worker times (raw stream handle, device index); one slot, set by
# install_launch_hook() or set_expected_stream(). Never rebound: the fingerprint watches globals.
_EXPECTED: list[tuple[int, int] | None] = [None]
# Launches seen on another stream or device since the last take_stray_stream_launches().
_STRAY_STREAMS: list[str] = []
# Kept per call at most (each also counts as SIDE_STREAM_OP in the trace, uncapped).
MAX_STRAY_STREAM_ENTRIES = 64


class OpTrace(TorchDispatchMode):
    """Counts aten ops by packet name (e.g. "aten.mm") while active."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Recent torch (2.13 here) otherwise wraps every subclass's __torch_dispatch__ in torch._dynamo.disable, so the
        # first op under the trace imports torch._dynamo: about 1.3 s of CPU in every worker, cold or warm (a
        # third of a small grade here). The wrapper only matters under torch.compile, which the worker refuses
        # (audit_hooks.GUARDED_TORCH); tests/worker/test_worker_package.py checks the import stays out.
        return False

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        packet = f"{func.namespace}.{func._opname}"
        if getattr(_COMPILING, "depth", 0) and _only_fake(args, kwargs):
            # A compiler tracing on fake tensors (`compiling`): no data, nothing the call computes.
            return func(*args, **(kwargs or {}))
        # The call's tape (gym.worker.tape): every op it dispatched, except Triton's own inside a launch.
        recorder = worker_tape.current() if not getattr(_IN_LAUNCH, "depth", 0) else None
        if recorder is not None:
            recorder.see(args, kwargs or {})
        if packet == HOST_READ_PACKET and recorder is not None and args and isinstance(args[0], torch.Tensor):
            # A count a kernel wrote, read on the host (gym.worker.tape.TapeRecorder.host_read_allowed); a
            # tolist() of one was allowed as a whole (`_host_read_list`).
            if getattr(_HOST_READ, "counted", False) or recorder.host_read_allowed(args[0]):
                packet = HOST_READ_OP
        self.record(packet)
        result = func(*args, **(kwargs or {}))
        if recorder is not None:
            recorder.op(func, args, kwargs or {}, result)
        return result

    def record(self, name: str) -> None:
        with _LOCK:
            self.ops[name] += 1

    def __exit__(self, *exc: Any) -> Any:
        _OWN_EXIT.active = True
        try:
            return super().__exit__(*exc)  # type: ignore[no-untyped-call]
        finally:
            _OWN_EXIT.active = False


# Ops of submission threads running while no call or import is traced.
STRAY = OpTrace()
# The trace's own entry and exit, as the class defines them (`traced` calls these, never an instance's).
_TRACE_ENTER: Callable[[OpTrace], OpTrace] = OpTrace.__enter__
_TRACE_EXIT: Callable[..., Any] = OpTrace.__exit__


class ForwardingTrace(OpTrace):
    """A trace for a submission thread: counts into the trace active right now."""

    def record(self, name: str) -> None:
        (_ACTIVE[-1] if _ACTIVE else STRAY).record(name)


class traced:
    """Context manager: run the body under `trace`, and make it where submission threads count."""

    def __init__(self, trace: OpTrace) -> None:
        self.trace = trace

    def __enter__(self) -> OpTrace:
        _ACTIVE.append(self.trace)
        # The class's own methods, never the instance's: a method planted on the trace object (it is reachable
        # from the submission's process) would otherwise run here, outside the timed window.
        # (Anything but an OpTrace here means the worker's class was replaced: its own class's method runs,
        # and the tamper fingerprint names the replacement after the call.)
        enter = _TRACE_ENTER if isinstance(self.trace, OpTrace) else type(self.trace).__enter__
        entered: OpTrace = enter(self.trace)
        return entered

    def __exit__(self, *exc: Any) -> None:
        try:
            leave = _TRACE_EXIT if isinstance(self.trace, OpTrace) else type(self.trace).__exit__
            leave(self.trace, *exc)
        finally:
            _ACTIVE.remove(self.trace)


def _wrap_start(original: Any) -> Any:
    def start_new_thread(function: Any, args: Any, kwargs: Any = None) -> Any:
        def run(*inner_args: Any, **inner_kwargs: Any) -> Any:
            with ForwardingTrace():
                return function(*inner_args, **inner_kwargs)

        return original(run, args, kwargs or {})

    start_new_thread._kgym_wrapped = True  # type: ignore[attr-defined]
    return start_new_thread


def _patch(owner: Any, name: str, value: Any) -> None:
    """setattr, remembered for hook_identities()."""
    setattr(owner, name, value)
    _PATCHED.append((owner, name))


def patch_watched(owner: Any, name: str, value: Any) -> None:
    """setattr, watched by the tamper fingerprint like every hook of this module (hook_identities())."""
    _patch(owner, name, value)


def _record(op: str) -> None:
    """Count a pseudo-op in the trace in force (the stray trace between calls)."""
    (_ACTIVE[-1] if _ACTIVE else STRAY).record(op)


def install_thread_hook() -> None:
    """Trace every thread started from now on (threading.Thread and _thread alike)."""
    if getattr(_thread.start_new_thread, "_kgym_wrapped", False):
        return
    wrapped = _wrap_start(_thread.start_new_thread)
    _patch(_thread, "start_new_thread", wrapped)
    _patch(_thread, "start_new", wrapped)
    _patch(threading, "_start_new_thread", wrapped)


def _is_fake(tensor: Any) -> bool:
    """A FakeTensor, or a plain tensor on the meta device: by exact type and torch's own C getter, never
    by a subclass's Python attributes (a `device` property can claim "meta" over real data)."""
    from torch._subclasses.fake_tensor import FakeTensor

    kind = type(tensor)
    return kind is FakeTensor or (kind is torch.Tensor and bool(_IS_META.__get__(tensor)))


def _only_fake(args: Any, kwargs: Any) -> bool:
    """Whether an op makes or reads fake tensors only: its tensors are all fake (FakeTensor, or on the
    meta device), or it has none and a FakeTensorMode is in force (a factory op: its result is fake)."""
    from torch.utils._pytree import tree_leaves

    tensors = [leaf for leaf in tree_leaves((args, kwargs or {})) if isinstance(leaf, torch.Tensor)]
    if not tensors:
        return torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None
    return all(_is_fake(tensor) for tensor in tensors)


def _mode_stacks() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Identities of the dispatch and function modes in force, innermost last."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return tuple(map(id, _get_current_dispatch_mode_stack())), tuple(map(id, _get_current_function_mode_stack()))


class compiling:
    """Context manager around a trusted compiler's lowering (Helion tracing a kernel on fake tensors,
    gym.worker.helion_dsl): the dispatch modes the compiler pushes and pops are not counted as
    disabling the trace, and ops whose tensors are all fake are neither counted nor taped. Ops on
    real tensors count as ever. What stays a tripwire inside: a pop or disabling that takes the op
    trace itself off the stack when the submission asked for it (the first deciding frame out from the
    pop is the submission's, directly or through a `with` of torch's helpers:
    gym.worker.audit_hooks.submission_asked); once the compiler itself has taken the trace off, any
    call into the submission's code while no op trace is on the stack, until the window closes
    (`_watch_the_rest_of_the_window`); and, on exit, mode stacks that are not what they were on entry
    (the trace still in force)."""

    def __enter__(self) -> None:
        self.stacks = _mode_stacks()
        _COMPILING.depth = getattr(_COMPILING, "depth", 0) + 1

    def __exit__(self, *exc: Any) -> None:
        _COMPILING.depth -= 1
        if not _COMPILING.depth and getattr(_COMPILING, "watching", False):
            sys.settrace(_COMPILING.previous_trace)
            _COMPILING.watching = False
        if _mode_stacks() != self.stacks:
            _record(DISABLED_OP)


def _watch_the_rest_of_the_window() -> None:
    """From the compiler's first pop of the trace off the top to the window's end: any call into the
    submission's code while no op trace is on the stack is DISABLED_OP (torch would go unseen there)."""
    if getattr(_COMPILING, "watching", False):
        return
    _COMPILING.watching = True
    # A trace function that answers None sees each new frame once and nothing else (no lines, returns or
    # C calls, which a profile function would pay for): the window's lowering costs a few percent more.
    _COMPILING.previous_trace = sys.gettrace()
    sys.settrace(_watch_calls)


def _watch_calls(frame: FrameType, event: str, arg: Any) -> None:
    if event != "call" or not worker_audit_hooks.is_submission_code(frame.f_code.co_filename):
        return
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    if not any(isinstance(mode, OpTrace) for mode in _get_current_dispatch_mode_stack()):
        _record(DISABLED_OP)


# Tripwires that take the trace off whatever is on top, or every mode off (`_unset_dispatch_mode` unsets
# torch's infra modes, FAKE and PROXY, by key: never the trace).
_POPS_THE_TOP = frozenset({"_pop_mode", "_pop_mode_temporarily", "_pop_torch_dispatch_stack"})
_DISABLES_ALL = frozenset({"_disable_current_modes", "_DisableTorchDispatch"})


def _compiler_may_pop(name: str, args: tuple[Any, ...]) -> bool:
    """Inside a compile window: whether the pop or disabling `name` (called with `args`) is the compiler's
    own (see `compiling`). A pop by an infra mode's key (FAKE, PROXY: a fake or proxy mode's own exit)
    never takes the trace."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    by_key = bool(args) and args[0] is not None
    takes_the_trace = name in _DISABLES_ALL or (name in _POPS_THE_TOP and not by_key and isinstance(_get_current_dispatch_mode(), OpTrace))
    if not takes_the_trace:
        return True
    # Frames 1 and 2 are `trip` and the tripwire: 3 is whoever called the pop (through contextlib, when a
    # `with` of torch's helpers asked). The submission asking, directly or through such a helper, trips.
    if worker_audit_hooks.submission_asked(sys._getframe(3)):
        return False
    if name in _POPS_THE_TOP:
        # (`_disable_current_modes` is watched while its region lasts: `_WatchedRegion`. `_DisableTorchDispatch`
        # leaves the stack as it is, for the fake-tensor kernels torch runs under it.)
        _watch_the_rest_of_the_window()
    return True


class _WatchedRegion:
    """`_disable_current_modes()` the compiler asked for inside a window: while its modes are off, any call
    into the submission's code trips (`_watch_calls`); the watch ends with the region."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __enter__(self) -> Any:
        entered = self.inner.__enter__()
        self.previous = sys.gettrace()
        sys.settrace(_watch_calls)
        return entered

    def __exit__(self, *exc: Any) -> Any:
        sys.settrace(self.previous)
        return self.inner.__exit__(*exc)


def install_mode_tripwire() -> None:
    """Count every pop or disabling of dispatch modes that is not our own exit (nor inside `compiling`)."""
    import torch
    import torch.utils._python_dispatch as python_dispatch

    def trip(name: str, args: tuple[Any, ...]) -> bool:
        """Record the pop unless it is ours or the compiler's; True for the compiler's (inside a window)."""
        if getattr(_OWN_EXIT, "active", False):
            return False
        if getattr(_COMPILING, "depth", 0) and _compiler_may_pop(name, args):
            return True
        (_ACTIVE[-1] if _ACTIVE else STRAY).record(DISABLED_OP)
        return False

    def wrap(owner: Any, name: str) -> None:
        original = getattr(owner, name, None)
        if original is None or getattr(original, "_kgym_wrapped", False):
            return

        def tripwire(*args: Any, **kwargs: Any) -> Any:
            compilers = trip(name, args or tuple(kwargs.values()))
            result = original(*args, **kwargs)
            if compilers and name == "_disable_current_modes":
                return _WatchedRegion(result)
            return result

        tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
        _patch(owner, name, tripwire)

    for name in ("_pop_mode", "_pop_mode_temporarily", "_disable_current_modes", "_pop_torch_dispatch_stack"):
        wrap(python_dispatch, name)
    for name in ("_pop_torch_dispatch_stack", "_unset_dispatch_mode", "_DisableTorchDispatch"):
        wrap(torch._C, name)


def install_hidden_launch_tripwire() -> None:
    """Count GPU work torch launches outside the dispatcher (torch.cuda.jiterator's pybind
    entry): no aten op is dispatched for it, so the op trace alone would not see it."""
    import torch

    for name in HIDDEN_LAUNCH_ENTRIES:
        original = getattr(torch._C, name, None)
        if original is None or getattr(original, "_kgym_wrapped", False):
            continue

        def make(original: Any) -> Any:
            def tripwire(*args: Any, **kwargs: Any) -> Any:
                _record(HIDDEN_LAUNCH_OP)
                return original(*args, **kwargs)

            tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
            return tripwire

        _patch(torch._C, name, make(original))


class _Callers:
    """Where Triton's own code lives, for `_triton_is_calling` (filled in by the first install)."""

    triton_dir = ""
    skipped_dirs: tuple[str, ...] = ()
    specialize: Any = None


def _locate_triton() -> None:
    if _Callers.triton_dir:
        return
    import torch
    import triton

    _Callers.triton_dir = os.path.dirname(os.path.abspath(triton.__file__)) + os.sep
    _Callers.skipped_dirs = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,)
    try:
        from triton._C.libtriton import native_specialize_impl

        _Callers.specialize = native_specialize_impl
    except ImportError:  # pragma: no cover - every Triton 3.x build has it
        _Callers.specialize = None


def _triton_is_calling(frame: FrameType | None) -> bool:
    """Whether the nearest caller outside torch and this module is Triton's own code: a file
    of the triton package, or the argument binder Triton generates with exec (it reads
    `data_ptr()` to specialise on alignment). A submission's grid function, launch hook,
    allocator or interpreted kernel body is not, even when Triton called it."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == __file__ or filename.startswith(_Callers.skipped_dirs):
            frame = frame.f_back
            continue
        if _Callers.triton_dir and filename.startswith(_Callers.triton_dir):
            return True
        return bool(
            _Callers.specialize is not None and frame.f_code.co_name == "dynamic_func" and frame.f_globals.get("specialize_impl") is _Callers.specialize
        )
    return False


def _exempt() -> bool:
    """A host bridge call Triton itself makes inside a launch or a descriptor's construction."""
    return bool(getattr(_IN_LAUNCH, "depth", 0)) and _triton_is_calling(sys._getframe(1))


def install_host_bridge_tripwire() -> None:
    """Count reads of tensor data by the host (numpy(), __array__, tolist, data_ptr, ...)
    outside Triton's own launch path: host-side computation leaves no aten op behind.
    Exempt: Triton's own code (see `_triton_is_calling`) inside a launch (argument
    pointers, the interpreter's host copies) or a TMA descriptor's construction."""
    import torch

    _locate_triton()
    for name in RUNTIME_HOST_BRIDGES:
        original = getattr(torch.Tensor, name, None)
        if original is None or getattr(original, "_kgym_wrapped", False):
            continue

        def make(original: Any, name_of: str) -> Any:
            def tripwire(self: Any, *args: Any, **kwargs: Any) -> Any:
                if name_of == "tolist" and not args and not kwargs and _ACTIVE:
                    read = _host_read_list(self)
                    if read is not None:
                        return read
                if _ACTIVE and not _exempt() and not (getattr(_COMPILING, "depth", 0) and _is_fake(self)):
                    _ACTIVE[-1].record(HOST_BRIDGE_OP)
                    # Recorded (the grade is rejected whatever follows): stop here rather than let the
                    # host compute the answer slowly in Python first.
                    raise PermissionError(f"kernel gym: Tensor.{name_of} hands tensor data to the host outside a Triton launch")
                return original(self, *args, **kwargs)

            tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
            return tripwire

        _patch(torch.Tensor, name, make(original, name))
    install_descriptor_exemption()


def _host_read_list(tensor: Any) -> list[Any] | Any | None:
    """`tensor.tolist()` as one `.item()` per element when the tensor is a host read the policy allows
    (gym.worker.tape.TapeRecorder.host_read_allowed): each value is then on the call's tape; None otherwise."""
    recorder = worker_tape.current()
    if recorder is None or not isinstance(tensor, torch.Tensor) or getattr(_IN_LAUNCH, "depth", 0) > 0:
        return None
    if not recorder.host_read_allowed(tensor, count=max(int(tensor.numel()), 1)):
        return None
    _HOST_READ.counted = True
    try:

        def nested(value: Any) -> Any:
            if value.dim() == 0:
                return value.item()
            return [nested(row) for row in value.unbind(0)]

        return nested(tensor)
    finally:
        _HOST_READ.counted = False


def _in_launch(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """call(*args, **kwargs) with this thread's launch depth raised."""
    _IN_LAUNCH.depth = getattr(_IN_LAUNCH, "depth", 0) + 1
    try:
        return call(*args, **kwargs)
    finally:
        _IN_LAUNCH.depth -= 1


def _count(name: str) -> None:
    with _LOCK:
        _LAUNCHES[name] += 1


def install_descriptor_exemption() -> None:
    """Host-side TMA descriptors (`triton.tools.tensor_descriptor.TensorDescriptor`) check
    `base.data_ptr() % 16` when built: run their `__post_init__` (which `from_tensor` and
    the interpreter's host copies reach too) as a launch, so that check, Triton's own code,
    does not trip; a base object's own `data_ptr()` method is the submission's and still can.
    (Gluon's descriptor, triton.experimental.gluon.nvidia.hopper, is left alone: importing
    it costs most of a second per grade, and submissions are Triton kernels.)"""
    from triton.tools.tensor_descriptor import TensorDescriptor

    original = vars(TensorDescriptor).get("__post_init__")
    if original is None or getattr(original, "_kgym_wrapped", False):
        return

    def __post_init__(self: Any) -> None:
        _in_launch(original, self)

    __post_init__._kgym_wrapped = True  # type: ignore[attr-defined]
    _patch(TensorDescriptor, "__post_init__", __post_init__)


class CudaLookups:
    """Where a GPU launch runs: `current_device()` (the device Triton launches on) and
    `default_stream(device)` (its default stream's raw handle). Captured when the launch
    hook is installed (patching torch.cuda later changes nothing); tests inject fakes."""

    def __init__(self, current_device: Callable[[], int], default_stream: Callable[[int], int]) -> None:
        self.current_device = current_device
        self.default_stream = default_stream


def _torch_cuda_lookups() -> CudaLookups | None:
    import torch

    if not torch.cuda.is_available():
        return None
    current_device = torch.cuda.current_device
    default_stream = torch.cuda.default_stream
    return CudaLookups(lambda: int(current_device()), lambda device: int(default_stream(device).cuda_stream))


def set_expected_stream(stream_id: int, device_index: int) -> None:
    """The stream (raw handle, as `torch.cuda.Stream.cuda_stream`) and device the worker times:
    a launch elsewhere is a side-stream launch. Call before the fingerprint is taken."""
    _EXPECTED[0] = (int(stream_id), int(device_index))


def expected_stream() -> tuple[int, int] | None:
    """(raw stream handle, device index) launches are expected on; None when unknown."""
    return _EXPECTED[0]


def _check_stream(name: str, stream: Any, device: int, lookups: CudaLookups) -> None:
    """Record a launch on `stream` of `device` that is not on the timed stream and device."""
    try:
        handle = int(stream or 0)
    except (TypeError, ValueError):
        handle = -1
    expected = _EXPECTED[0]
    if expected is None:
        # Nothing captured (CUDA was not initialised at install): the default stream of the
        # launch's own device is the best guess; the device itself cannot be checked.
        expected = (lookups.default_stream(device), device)
    if (handle, device) == expected:
        return
    _record(SIDE_STREAM_OP)
    with _LOCK:
        if len(_STRAY_STREAMS) < MAX_STRAY_STREAM_ENTRIES:
            _STRAY_STREAMS.append(f"{name}: stream {handle:#x} on device {device} (timed: stream {expected[0]:#x} on device {expected[1]})")


def _wrap_launcher(cls: Any, lookups: CudaLookups | None) -> None:
    """Count every launch through a GPU backend's launcher class (every real GPU launch
    passes its `__call__`: `JITFunction.run`, `CompiledKernel[grid](...)`, `.run(...)`,
    `._run(...)`), raise the launch depth while it extracts argument pointers, and check
    the stream it launches on (its `stream` argument) and the current device."""
    init = vars(cls).get("__init__")
    call = vars(cls).get("__call__")
    if init is None or call is None or getattr(call, "_kgym_wrapped", False):
        return

    def __init__(self: Any, src: Any, metadata: Any, *args: Any, **kwargs: Any) -> None:
        init(self, src, metadata, *args, **kwargs)
        name = getattr(src, "name", None) or getattr(metadata, "name", None) or "kernel"
        try:
            self._kgym_name = str(name)
        except AttributeError:  # pragma: no cover - a launcher with __slots__
            pass

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = str(getattr(self, "_kgym_name", None) or "kernel")
        stream = args[3] if len(args) > 3 else kwargs.get("stream")
        device = lookups.current_device() if lookups is not None else None
        result = _in_launch(call, self, *args, **kwargs)
        _count(name)
        if lookups is not None and device is not None:
            _check_stream(name, stream, device, lookups)
        return result

    __init__._kgym_wrapped = True  # type: ignore[attr-defined]
    __call__._kgym_wrapped = True  # type: ignore[attr-defined]
    _patch(cls, "__init__", __init__)
    _patch(cls, "__call__", __call__)


def _kernel_name(function: Any) -> str:
    return str(getattr(getattr(function, "fn", None), "__name__", None) or getattr(function, "__name__", None) or "kernel")


def _taped(function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Record a launch on the call's tape (gym.worker.tape) once its grid is known; returns the
    run's kwargs with a callable grid wrapped so the resolved grid is what the tape keeps."""
    recorder = worker_tape.current()
    if recorder is None or kwargs.get("warmup"):
        return kwargs
    qualname = str(getattr(getattr(function, "fn", None), "__qualname__", None) or _kernel_name(function))
    # A function from another file than the submission's (Helion's generated module) is named by its module.
    name = launched_modules.launch_name(function, qualname)
    code = worker_tape.code_identity(getattr(function, "fn", None))
    grid = kwargs.get("grid")
    options = {key: value for key, value in kwargs.items() if key not in ("grid", "warmup")}
    if not callable(grid):
        recorder.launch(name, grid, args, options, code)
        return kwargs

    def resolved(meta: Any) -> Any:
        value = grid(meta)
        recorder.launch(name, value, args, options, code)
        return value

    return {**kwargs, "grid": resolved}


def _wrap_autotuner_bench() -> None:
    """The autotuner's benchmark runs of each config are left out of the tape (only the chosen
    config's launch computes the call's answer); their ops and launches still count in the trace."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover
        return
    original = vars(Autotuner).get("_bench")
    if original is None or getattr(original, "_kgym_wrapped", False):
        return

    def _bench(self: Any, *args: Any, **kwargs: Any) -> Any:
        with worker_tape.skipping():
            return original(self, *args, **kwargs)

    _bench._kgym_wrapped = True  # type: ignore[attr-defined]
    _patch(Autotuner, "_bench", _bench)


def _wrap_jit_run(cls: Any) -> None:
    """`JITFunction.run` binds and specialises the arguments (reading `data_ptr()` for
    alignment) before it calls the launcher: raise the launch depth there too. The launch
    itself is counted in the launcher (a warm-up compiles and launches nothing)."""
    original = vars(cls).get("run")
    if original is None or getattr(original, "_kgym_wrapped", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _in_launch(original, self, *args, **_taped(self, args, kwargs))

    run._kgym_wrapped = True  # type: ignore[attr-defined]
    _patch(cls, "run", run)


def _wrap_interpreted_run(cls: Any) -> None:
    """Under the interpreter a launch is `InterpretedFunction.run` (no launcher, no
    CompiledKernel: a warm-up returns None): count it there, by the kernel's name."""
    original = vars(cls).get("run")
    if original is None or getattr(original, "_kgym_wrapped", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = _in_launch(original, self, *args, **_taped(self, args, kwargs))
        if not kwargs.get("warmup"):
            _count(_kernel_name(self))
        return result

    run._kgym_wrapped = True  # type: ignore[attr-defined]
    _patch(cls, "run", run)


def install_launch_hook(lookups: CudaLookups | None = None) -> None:
    """Count every Triton launch (call before the submission is imported).

    On a GPU the backends' launcher classes count (see `_wrap_launcher`) and check each
    launch's stream and device against `expected_stream()`: the default stream of the
    current device, captured now when CUDA is initialised (else see `_check_stream`), or
    whatever `set_expected_stream` sets. `lookups` replaces torch.cuda's (tests). Under the
    interpreter (TRITON_INTERPRET=1 when this is called) `InterpretedFunction.run` counts;
    in GPU mode an InterpretedFunction a submission builds itself computes on the host and
    is neither counted nor exempt from the host bridge tripwire."""
    import torch
    from triton import knobs
    from triton.runtime.jit import JITFunction

    _locate_triton()
    if lookups is None:
        lookups = _torch_cuda_lookups()
        capture = lookups is not None and torch.cuda.is_initialized()
    else:
        capture = True
    if capture and lookups is not None and _EXPECTED[0] is None:
        device = lookups.current_device()
        set_expected_stream(lookups.default_stream(device), device)
    for module, attribute in (("triton.backends.nvidia.driver", "CudaLauncher"), ("triton.backends.amd.driver", "HIPLauncher")):
        try:
            launcher = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):  # pragma: no cover - a Triton build without that backend
            continue
        _wrap_launcher(launcher, lookups)
    _wrap_jit_run(JITFunction)
    _wrap_autotuner_bench()
    if knobs.runtime.interpret:
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:  # pragma: no cover - interpreter missing from a Triton build
            return
        _wrap_interpreted_run(InterpretedFunction)


def take_launches() -> dict[str, int]:
    """Launches counted since the last call, by kernel name; resets the count."""
    with _LOCK:
        launches = dict(_LAUNCHES)
        _LAUNCHES.clear()
    return launches


def take_stray_stream_launches() -> list[str]:
    """Launches on another stream or device than `expected_stream()` since the last call,
    described (at most MAX_STRAY_STREAM_ENTRIES); resets the list. Each one also counted
    SIDE_STREAM_OP in the trace in force, which is what the grader judges."""
    with _LOCK:
        stray = list(_STRAY_STREAMS)
        _STRAY_STREAMS.clear()
    return stray


def hook_identities() -> dict[str, int]:
    """Identity of every attribute the install_* functions patched, by dotted name: for the
    worker's tamper fingerprint (a submission restoring or replacing one changes it)."""
    identities: dict[str, int] = {}
    for owner, name in _PATCHED:
        prefix = owner.__name__ if isinstance(owner, ModuleType) else f"{owner.__module__}.{owner.__qualname__}"
        identities[f"{prefix}.{name}"] = id(vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None))
    identities["kgym.expected_stream"] = id(_EXPECTED[0])
    for name in ("triton_dir", "skipped_dirs", "specialize"):
        identities[f"kgym.callers.{name}"] = id(getattr(_Callers, name))
    return identities
