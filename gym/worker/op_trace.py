"""Worker-side evidence of real work: which torch ops ran and which Triton kernels launched.

`OpTrace` is a TorchDispatchMode that counts every aten op dispatched on the
calling thread. TorchDispatchMode is per thread, so `install_thread_hook()`
makes every thread the submission starts (through `threading` or the raw
`_thread` API) run under a `ForwardingTrace` that counts into whatever trace is
active at the moment (the current call's, the import's, or the stray trace
between calls). `install_launch_hook()` counts Triton launches by kernel name,
and `install_mode_tripwire()` counts attempts to pop or disable dispatch modes
as the pseudo-op `kgym.dispatch_mode_disabled`. The grader, not the worker,
decides which ops were allowed.
"""

from __future__ import annotations

import _thread
import threading
from collections import Counter
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from .torch_policy import DISABLED_OP, HIDDEN_LAUNCH_ENTRIES, HIDDEN_LAUNCH_OP, HOST_BRIDGE_OP, RUNTIME_HOST_BRIDGES

_LAUNCHES: Counter[str] = Counter()
_LOCK = threading.Lock()
# Traces in force, innermost last; ops of submission threads go to the innermost one.
_ACTIVE: list[OpTrace] = []
# Set while one of our own traces is being exited (its own pop is not an attack).
_OWN_EXIT = threading.local()
# Depth of Triton launches on this thread (Triton itself reads pointers and data while launching).
_IN_LAUNCH = threading.local()


class OpTrace(TorchDispatchMode):
    """Counts aten ops by packet name (e.g. "aten.mm") while active."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.record(f"{func.namespace}.{func._opname}")
        return func(*args, **(kwargs or {}))

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
        entered: OpTrace = self.trace.__enter__()  # type: ignore[no-untyped-call]
        return entered

    def __exit__(self, *exc: Any) -> None:
        try:
            self.trace.__exit__(*exc)
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


def install_thread_hook() -> None:
    """Trace every thread started from now on (threading.Thread and _thread alike)."""
    if getattr(_thread.start_new_thread, "_kgym_wrapped", False):
        return
    wrapped = _wrap_start(_thread.start_new_thread)
    _thread.start_new_thread = wrapped
    _thread.start_new = wrapped
    threading._start_new_thread = wrapped  # type: ignore[attr-defined]


def install_mode_tripwire() -> None:
    """Count every pop or disabling of dispatch modes that is not our own exit."""
    import torch
    import torch.utils._python_dispatch as python_dispatch

    def trip() -> None:
        if not getattr(_OWN_EXIT, "active", False):
            (_ACTIVE[-1] if _ACTIVE else STRAY).record(DISABLED_OP)

    def wrap(owner: Any, name: str) -> None:
        original = getattr(owner, name, None)
        if original is None or getattr(original, "_kgym_wrapped", False):
            return

        def tripwire(*args: Any, **kwargs: Any) -> Any:
            trip()
            return original(*args, **kwargs)

        tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
        setattr(owner, name, tripwire)

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
                (_ACTIVE[-1] if _ACTIVE else STRAY).record(HIDDEN_LAUNCH_OP)
                return original(*args, **kwargs)

            tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
            return tripwire

        setattr(torch._C, name, make(original))


def install_host_bridge_tripwire() -> None:
    """Count reads of tensor data by the host (numpy(), __array__, tolist, data_ptr, ...)
    outside Triton's own launch path: host-side computation leaves no aten op behind."""
    import torch

    for name in RUNTIME_HOST_BRIDGES:
        original = getattr(torch.Tensor, name, None)
        if original is None or getattr(original, "_kgym_wrapped", False):
            continue

        def make(original: Any) -> Any:
            def tripwire(self: Any, *args: Any, **kwargs: Any) -> Any:
                if _ACTIVE and not getattr(_IN_LAUNCH, "depth", 0):
                    _ACTIVE[-1].record(HOST_BRIDGE_OP)
                return original(self, *args, **kwargs)

            tripwire._kgym_wrapped = True  # type: ignore[attr-defined]
            return tripwire

        setattr(torch.Tensor, name, make(original))


def _wrap_run(cls: Any) -> None:
    original = cls.run
    if getattr(original, "_kgym_wrapped", False):
        return

    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        if not warmup:
            name = str(getattr(getattr(self, "fn", None), "__name__", None) or getattr(self, "__name__", "kernel"))
            with _LOCK:
                _LAUNCHES[name] += 1
        _IN_LAUNCH.depth = getattr(_IN_LAUNCH, "depth", 0) + 1
        try:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            _IN_LAUNCH.depth -= 1

    run._kgym_wrapped = True  # type: ignore[attr-defined]
    cls.run = run


def install_launch_hook() -> None:
    """Count every Triton launch (call before the submission is imported)."""
    from triton.runtime.jit import JITFunction

    _wrap_run(JITFunction)
    try:
        from triton.runtime.interpreter import InterpretedFunction

        _wrap_run(InterpretedFunction)
    except ImportError:  # pragma: no cover - interpreter missing from a Triton build
        pass


def take_launches() -> dict[str, int]:
    """Launches counted since the last call, by kernel name; resets the count."""
    with _LOCK:
        launches = dict(_LAUNCHES)
        _LAUNCHES.clear()
    return launches
