"""The worker's fixes to Triton's CPU interpreter, installed (on CPU only) before the submission is imported.

- Benchmarking: under TRITON_INTERPRET=1 there is no GPU driver, so
  `triton.testing.do_bench` and the benchmarker `@triton.autotune` asks the driver for
  both fail. The worker installs a host-timer `do_bench` with the same signature and
  return conventions (milliseconds; `quantiles` / `return_mode`), and points the
  autotuner at it. Figures are interpreted host time: good enough to pick a config,
  never comparable with GPU timings.
- Interpreter gaps honest code hits: libdevice (`libdevice`), device queries
  answered for a documented fake device (`device`), float8 casts rounded as
  a GPU rounds them (`fp8`), and the compiler's
  meaning of `and` / `or` / `not`, float scalar arguments and TF32 dots
  (`semantics`).
- Speed: the interpreter's per-launch and per-jit-call re-patching of `triton.language`
  walks a cached list of builtin names instead of listing every package again
  (`patch_cache`).
- CPU verdicts that match a GPU's: program instances run in a secret, per-launch
  shuffled order (`order`), so order-dependent kernels are not reproducible; inside a
  program, same-address atomic lanes apply in a secret order and a lane reading another
  lane's store made since the last `tl.debug_barrier()` reads the old value (`lanes`).

What still differs is INTERPRETER_LIMITS (listed in the task prompt for CPU grading);
where a kernel hits one, the error is an InterpreterLimitError naming it. The patches that
verdicts rest on (program and lane order, TF32, the compiler's semantics) are registered with the
launch hook's tamper fingerprint (`op_trace.hook_identities()`): restoring one is tampering.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from .limits import FAKE_DEVICE_NAME, INTERPRETER_LIMITS, InterpreterLimitError

__all__ = ["FAKE_DEVICE_NAME", "INTERPRETER_LIMITS", "MAX_RUNS", "InterpreterLimitError", "cpu_do_bench", "install"]

# Keep the interpreter's benchmarking short: it is slow and only picks a config.
MAX_RUNS = 5

_perf_counter = time.perf_counter


def cpu_do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Any = None,
    quantiles: list[float] | tuple[float, ...] | None = None,
    return_mode: str = "mean",
) -> Any:
    """Host-timed stand-in for triton.testing.do_bench; times in milliseconds."""
    assert return_mode in ["min", "max", "mean", "median", "all"]
    fn()
    start = _perf_counter()
    fn()
    estimate_ms = (_perf_counter() - start) * 1e3
    runs = max(1, min(MAX_RUNS, int(rep / max(estimate_ms, 1e-3))))
    times: list[float] = []
    for _ in range(runs):
        start = _perf_counter()
        fn()
        times.append((_perf_counter() - start) * 1e3)
    if quantiles is not None:
        ordered = sorted(times)
        picked = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return picked[0] if len(picked) == 1 else picked
    if return_mode == "all":
        return times
    reducers: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}
    return reducers[return_mode](times)


def _patch(owner: Any, name: str, value: Any) -> None:
    """setattr, remembered by the launch hook for the worker's tamper fingerprint when it can."""
    from .. import op_trace

    remember = getattr(op_trace, "_patch", None)
    if callable(remember):
        remember(owner, name, value)
    else:  # pragma: no cover - op_trace without its registry
        setattr(owner, name, value)


_INSTALLED: list[bool] = []


def install() -> None:
    """Install every interpreter fix (once per process; the worker calls it on CPU only)."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    import triton.testing
    from triton.runtime.autotuner import Autotuner

    from . import device, fp8, lanes, libdevice, order, patch_cache, reductions, semantics

    # Route triton.testing.do_bench and the autotuner's benchmarker to `cpu_do_bench`.
    triton.testing.do_bench = cpu_do_bench

    def do_bench(self: Any) -> Any:
        return self._do_bench if getattr(self, "_do_bench", None) is not None else cpu_do_bench

    Autotuner.do_bench = property(do_bench)
    # Gaps that only ever hurt the kernel that hits them: plain setattr.
    device.install(setattr, cpu_do_bench)
    libdevice.install(setattr)
    fp8.install(setattr)
    # What verdicts rest on (program and lane order, TF32, the compiler's semantics): in the tamper fingerprint.
    semantics.install(_patch)
    lanes.install(_patch)  # before `order`, whose spin detection then sees what the lanes read
    order.install(_patch)
    # Speed only, last (it lists the language's builtins as the fixes above leave them): plain setattr.
    patch_cache.install(setattr)
    reductions.install(setattr)
