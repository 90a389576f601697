"""Program instances of each interpreted launch run in a secret, per-launch shuffled order.

Triton's interpreter runs the programs of a launch one after another in grid order, so
float atomics always sum in the same order and inter-program races always resolve the
same way: a `deterministic` contract has no teeth on CPU. Here every launch runs its
programs in a fresh random order (sort keys drawn from os.urandom for that launch
alone: no state a submission could read or predict), so order-dependent kernels give
run-to-run different results on CPU as they do on a GPU.

Mechanics: `GridExecutor.__init__` swaps its kernel function for a `program` stand-in with
the same signature, and `InterpreterBuilder.set_grid_dim` (called once per launch, before
the grid loop) starts a new launch. The loop still calls the stand-in once per grid
point; each call runs the next program of the shuffled order instead (the loop's own grid
point is ignored), or nothing when that program already ran.

A program that spins waiting for another (a flag or lock read with an atomic or a
volatile load, e.g. a chained scan's look-back) would hang: programs run one at a time.
After SPIN_REPEATS identical reads (same addresses, same values) the spinning program
yields: the lowest-numbered program that has not started runs to completion inside it
(a GPU schedules blocks in that order, which is what such kernels rely on), and the
spinning program reads again. Any order of this kind is one a GPU could produce. When no
program is left to run and it still spins, InterpreterLimitError says so instead of
hanging until the timeout.
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Callable
from typing import Any

from . import lanes
from .limits import InterpreterLimitError

# Identical atomic / volatile reads in a row before a spinning program lets another one run.
SPIN_REPEATS = 32
# Identical reads in a row, with no program left to run, before it is a deadlock.
DEADLOCK_REPEATS = 20_000
# Programs running inside spinning programs, at most (each level costs Python stack frames).
MAX_NESTING = 16


_urandom = os.urandom
_from_bytes = int.from_bytes


def shuffled(count: int) -> list[int]:
    """0..count-1 in a fresh random order, drawn from os.urandom for this call only.

    No Python-level generator is involved (a submission can patch `random.Random`'s methods
    in the shared `random` module): each program gets 8 random bytes as its sort key."""
    if count <= 1:
        return list(range(count))
    keys = _urandom(8 * count)
    return sorted(range(count), key=lambda index: _from_bytes(keys[8 * index : 8 * index + 8], "little"))


class Launch:
    """The programs of one launch: which ran, the shuffled order, the one running now."""

    __slots__ = ("args", "builder", "current", "cursor", "depth", "done", "fn", "grid", "last", "lowest", "order", "repeats")

    def __init__(self, builder: Any, grid: tuple[int, int, int]) -> None:
        self.builder = builder
        self.grid = grid
        count = grid[0] * grid[1] * grid[2]
        self.order = shuffled(count)
        self.done = bytearray(count)
        self.cursor = 0
        self.lowest = 0
        self.fn: Callable[..., Any] | None = None
        self.args: dict[str, Any] = {}
        self.current = -1
        self.depth = 0
        self.repeats = 0
        self.last: tuple[Any, ...] | None = None

    def next_shuffled(self) -> int | None:
        order, done = self.order, self.done
        while self.cursor < len(order):
            program = order[self.cursor]
            self.cursor += 1
            if not done[program]:
                return program
        return None

    def next_lowest(self) -> int | None:
        done = self.done
        while self.lowest < len(done) and done[self.lowest]:
            self.lowest += 1
        return self.lowest if self.lowest < len(done) else None

    def index(self, program: int) -> tuple[int, int, int]:
        """Grid coordinates of a linear program id (x fastest, as a GPU numbers blocks)."""
        nx, ny, _ = self.grid
        return program % nx, (program // nx) % ny, program // (nx * ny)

    def run(self, program: int) -> None:
        assert self.fn is not None
        self.done[program] = 1
        saved = (self.current, self.repeats, self.last)
        self.current, self.repeats, self.last = program, 0, None
        self.builder.grid_idx = self.index(program)
        self.depth += 1
        log = lanes.begin_program()
        try:
            self.fn(**self.args)
        finally:
            lanes.end_program(log)
            self.depth -= 1
            self.current, self.repeats, self.last = saved
            if self.current >= 0:
                self.builder.grid_idx = self.index(self.current)

    def observe(self, kind: str, pointers: Any, values: Any) -> None:
        """An atomic or volatile read by the running program: yield to another program when it spins."""
        key = (kind, pointers.tobytes(), values.tobytes())
        if key != self.last:
            self.last, self.repeats = key, 0
            return
        self.repeats += 1
        if self.repeats % SPIN_REPEATS:
            return
        waiting = self.current
        program = self.next_lowest() if self.depth <= MAX_NESTING else None
        if program is not None:
            self.run(program)
            self.repeats, self.last = 0, None
        elif self.repeats >= DEADLOCK_REPEATS:
            raise InterpreterLimitError(
                f"program {self.index(waiting)} read the same values {self.repeats} times in a row (it spins waiting for another program), "
                "and every other program has finished or is itself waiting: programs run one at a time on CPU, so a program can only be "
                "released by one that has not started yet",
                "on a GPU programs run concurrently",
            )


class _State:
    launch: Launch | None = None


STATE = _State()


def scheduled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The stand-in GridExecutor calls once per grid point: runs the launch's next shuffled program.

    It has the kernel's signature, annotations and globals (GridExecutor reads all three)."""
    state = STATE

    def program(**args: Any) -> None:
        launch = state.launch
        if launch is None:  # pragma: no cover - set_grid_dim always starts a launch first
            fn(**args)
            return
        chosen = launch.next_shuffled()
        if chosen is None:
            return  # it already ran, inside a program that waited for it
        launch.fn, launch.args = fn, args
        launch.run(chosen)

    name = getattr(fn, "__name__", "program")
    stand_in = types.FunctionType(program.__code__, fn.__globals__, name, None, program.__closure__)
    stand_in.__qualname__ = getattr(fn, "__qualname__", name)
    stand_in.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    stand_in.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    stand_in.__module__ = getattr(fn, "__module__", __name__)
    stand_in.__kgym_kernel__ = fn  # type: ignore[attr-defined]
    return stand_in


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """Shuffle the program order of every interpreted launch (call before the submission runs)."""
    from triton.runtime import interpreter

    builder_class = interpreter.InterpreterBuilder
    executor_class = interpreter.GridExecutor
    stand_ins: dict[Any, Callable[..., Any]] = {}

    executor_init = executor_class.__init__

    def __init__(self: Any, fn: Any, *args: Any, **kwargs: Any) -> None:
        executor_init(self, fn, *args, **kwargs)
        stand_in = stand_ins.get(self.fn)
        if stand_in is None:
            stand_in = stand_ins[self.fn] = scheduled(self.fn)
        self.fn = stand_in

    patch(executor_class, "__init__", __init__)

    set_grid_dim = builder_class.set_grid_dim

    def _set_grid_dim(self: Any, nx: int, ny: int, nz: int) -> None:
        set_grid_dim(self, nx, ny, nz)
        STATE.launch = Launch(self, (int(nx), int(ny), int(nz)))

    patch(builder_class, "set_grid_dim", _set_grid_dim)

    atomic_cas = builder_class.create_atomic_cas
    atomic_rmw = builder_class.create_atomic_rmw
    masked_load = builder_class.create_masked_load

    def _atomic_cas(self: Any, ptr: Any, cmp: Any, val: Any, sem: Any, scope: Any) -> Any:
        result = atomic_cas(self, ptr, cmp, val, sem, scope)
        launch = STATE.launch
        if launch is not None and launch.depth:
            launch.observe("cas", ptr.data, result.data)
        return result

    def _atomic_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, sem: Any, scope: Any) -> Any:
        result = atomic_rmw(self, op, ptr, val, mask, sem, scope)
        launch = STATE.launch
        if launch is not None and launch.depth:
            launch.observe("rmw", ptr.data, result.data)
        return result

    def _masked_load(self: Any, ptrs: Any, mask: Any, other: Any, cache_modifier: Any, eviction_policy: Any, is_volatile: Any) -> Any:
        result = masked_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile)
        if is_volatile:
            launch = STATE.launch
            if launch is not None and launch.depth:
                launch.observe("load", ptrs.data, result.data)
        return result

    patch(builder_class, "create_atomic_cas", _atomic_cas)
    patch(builder_class, "create_atomic_rmw", _atomic_rmw)
    patch(builder_class, "create_masked_load", _masked_load)
