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
