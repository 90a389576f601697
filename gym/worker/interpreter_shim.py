"""Make Triton's benchmarking work under the CPU interpreter, so submissions can autotune.

Under TRITON_INTERPRET=1 there is no GPU driver: `triton.testing.do_bench` and
the benchmarker `@triton.autotune` asks the driver for both fail. The worker
installs a host-timer `do_bench` with the same signature and return
conventions (milliseconds; `quantiles` / `return_mode`), and points the
autotuner at it. Figures are interpreted host time: good enough to pick a
config, never comparable with GPU timings.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

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


def install() -> None:
    """Route triton.testing.do_bench and the autotuner's benchmarker to `cpu_do_bench`."""
    import triton.testing
    from triton.runtime.autotuner import Autotuner

    triton.testing.do_bench = cpu_do_bench

    def do_bench(self: Any) -> Any:
        return self._do_bench if getattr(self, "_do_bench", None) is not None else cpu_do_bench

    Autotuner.do_bench = property(do_bench)
