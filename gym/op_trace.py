"""Worker-side evidence of real work: which torch ops ran and which Triton kernels launched.

`OpTrace` is a TorchDispatchMode that counts every aten op dispatched on the
calling thread; `install_launch_hook()` wraps Triton's launch entry points
(compiled and interpreted) to count launches by kernel name. The grader, not
the worker, decides which ops were allowed.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

_LAUNCHES: Counter[str] = Counter()
_LAUNCH_LOCK = threading.Lock()


class OpTrace(TorchDispatchMode):
    """Counts aten ops by packet name (e.g. "aten.mm") while active."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops[f"{func.namespace}.{func._opname}"] += 1
        return func(*args, **(kwargs or {}))


# The trace of the call in progress; threads started during it are traced into it too.
_ACTIVE: list[OpTrace] = []


class traced:
    """Context manager: run the body under `trace`, and make it the trace new threads inherit."""

    def __init__(self, trace: OpTrace) -> None:
        self.trace = trace

    def __enter__(self) -> OpTrace:
        _ACTIVE.append(self.trace)
        return self.trace.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            self.trace.__exit__(*exc)
        finally:
            _ACTIVE.remove(self.trace)


def install_thread_hook() -> None:
    """Make every Python thread started while a call is traced run under that call's trace.

    TorchDispatchMode is per thread: without this, torch ops on a worker
    thread the kernel starts and joins would go unseen. The trace is taken when
    the thread is started, so a thread that only gets to run later still counts
    against the call that started it.
    """
    original_start, original_run = threading.Thread.start, threading.Thread.run
    if getattr(original_run, "_kgym_wrapped", False):
        return

    def start(self: threading.Thread) -> None:
        self._kgym_trace = _ACTIVE[-1] if _ACTIVE else None  # type: ignore[attr-defined]
        return original_start(self)

    def run(self: threading.Thread) -> None:
        trace = getattr(self, "_kgym_trace", None)
        if trace is None:
            return original_run(self)
        with OpTrace() as local:
            try:
                return original_run(self)
            finally:
                trace.ops.update(local.ops)

    run._kgym_wrapped = True  # type: ignore[attr-defined]
    threading.Thread.start = start  # type: ignore[method-assign]
    threading.Thread.run = run  # type: ignore[method-assign]


def _wrap_run(cls: type) -> None:
    original = cls.run
    if getattr(original, "_kgym_wrapped", False):
        return

    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        if not warmup:
            name = getattr(getattr(self, "fn", None), "__name__", None) or getattr(self, "__name__", "kernel")
            with _LAUNCH_LOCK:
                _LAUNCHES[name] += 1
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

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
    with _LAUNCH_LOCK:
        launches = dict(_LAUNCHES)
        _LAUNCHES.clear()
    return launches
