"""Counting what a replay's kernels move through global memory and compute, under Triton's interpreter.

The witness (gym.worker.witness) replays one call's tape with only the file's jit functions,
on fresh inputs, after the submission's process is gone; for the item the trusted side marks
(`ReplayItem.count`) it runs that replay once more, interpreted, inside `TrafficCounter`. The
counter wraps the interpreter's builder, which every `tl.load`, `tl.store`, atomic and
`tl.dot` of an interpreted program goes through, so nothing the submission wrote can feed it:

- bytes read / written: per load or store of one program, the distinct addresses of its
  unmasked lanes times the element size (a block pointer, tensor descriptor or gather is the
  same masked load underneath). A lane the mask turns off moves nothing; two lanes of one
  instruction on the same address move it once (a GPU coalesces them); the same address in
  two instructions, or in two programs, moves twice (no cache is modelled). An atomic reads
  and writes each unmasked lane.
- FLOPs: 2·m·n·k per `tl.dot` (summed over its batch), where m, n and k count the rows of A,
  the columns of B and the shared index that hold any nonzero value (tile padding a masked load
  fills with zeros is not work the task needs; a benchmark shape that fits the tile has none);
  one per lane of each floating add, sub, mul, div, rem, min, max and math function (`tl.exp`,
  `tl.math.*`, and every floating libdevice / extern function: exp, log, pow, tanh, erf, rsqrt,
  ...); two per FMA (`tl.fma`, libdevice fma and its rounding variants) and per clamp; n - 1 per
  reduced or scanned row of a `tl.sum` / `tl.max` / `tl.min` / `tl.cumsum` / `tl.cumprod` (a
  reduction or scan with a combine function counts the combine's own ops); one per unmasked lane
  of a floating atomic add, min or max. Integer and pointer arithmetic, casts, bit casts, sign-bit
  ops (`tl.abs`, copysign) and selects count nothing. `dot_flops` says which FLOPs are `tl.dot`'s
  (tensor cores on a GPU), `special` how many lanes were special functions (transcendentals,
  divisions, square roots, libdevice math: a GPU's special-function unit or a software sequence,
  slower per op than an FMA): the modelled time (gym.grading.signal.traffic_model) weighs them.
- per launch: the kernel, the programs its grid ran; per buffer: the bytes attributed to
  each storage the replay built (inputs by name, the call's outputs, scratch).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field

from .protocol import WireModel

# The interpreter's floating binary ops and math functions, one FLOP per lane.
FLOAT_BINARY = (
    "create_fadd",
    "create_fsub",
    "create_fmul",
    "create_fdiv",
    "create_frem",
    "create_precise_divf",
    "create_minimumf",
    "create_maximumf",
    "create_minnumf",
    "create_maxnumf",
)
FLOAT_UNARY = (
    "create_exp",
    "create_exp2",
    "create_log",
    "create_log2",
    "create_sqrt",
    "create_precise_sqrt",
    "create_rsqrt",
    "create_sin",
    "create_cos",
    "create_erf",
    "create_floor",
    "create_ceil",
)
# Of those, the special functions (the GPU's special-function unit, or a software sequence).
SPECIAL = frozenset(
    {
        "create_fdiv",
        "create_frem",
        "create_precise_divf",
        "create_exp",
        "create_exp2",
        "create_log",
        "create_log2",
        "create_sqrt",
        "create_precise_sqrt",
        "create_rsqrt",
        "create_sin",
        "create_cos",
        "create_erf",
    }
)
# Floating libdevice functions by cost: two FLOPs (fused multiply-adds), plain arithmetic (one FLOP,
# no special-function unit), or nothing (conversions, bit casts, sign-bit ops); every other
# floating libdevice function is one special FLOP per lane.
# (Names as libdevice's functions are; a symbol without one is matched stripped of "__nv_", its "f" kept.)
EXTERN_FMA = re.compile(r"^fmaf?(_r[nzdu])?$")
EXTERN_PLAIN = re.compile(r"^((add|sub|mul)f?_r[nzdu]|(fmin|fmax|fdim|floor|ceil|trunc|round|rint|nearbyint)f?|saturatef)$")
EXTERN_FREE = re.compile(r"(2(double|float|int|uint|ll|ull|loint|hiint)(_r[nzdu])?$|_as_|^(fabs|abs|copysign|nextafter)f?$|^hiloint2double$)")
# Atomic read-modify-writes that compute on a floating element.
FLOAT_ATOMICS = frozenset({"FADD", "MIN", "MAX", "UMIN", "UMAX"})
# Largest count of launches a counted replay reports one by one (the totals always cover all).
MAX_LAUNCH_ROWS = 256


class LaunchCount(WireModel):
    kernel: str = Field(description='The launched jit function\'s name, or the aten op (e.g. "aten.convolution") for a torch op.')
    torch_op: bool = Field(
        default=False, description="A torch op the tape ran beside its launches (an anchor a task allows): bytes of its tensor arguments and results."
    )
    programs: int = Field(ge=0, description="Program instances its grid ran (0 for a torch op).")
    bytes_read: int = Field(ge=0, description="Bytes its loads (and atomics) read.")
    bytes_written: int = Field(ge=0, description="Bytes its stores (and atomics) wrote.")
    flops: int = Field(ge=0, description="Its floating-point operations.")
    dot_flops: int = Field(default=0, ge=0, description="Of those, tl.dot's (a torch op's matmul / convolution FLOPs): tensor-core work on a GPU.")
    special: int = Field(default=0, ge=0, description="Lanes of special functions among its FLOPs (transcendentals, divisions, square roots, libdevice math).")


class BufferCount(WireModel):
    name: str = Field(description='The buffer: an input\'s parameter name, "output #k", or "scratch #k".')
    bytes: int = Field(ge=0, description="Its size in bytes.")
    bytes_read: int = Field(ge=0, description="Bytes the kernels read from it.")
    bytes_written: int = Field(ge=0, description="Bytes the kernels wrote to it.")


class TrafficCounts(WireModel):
    launches: list[LaunchCount] = Field(default_factory=list, description="Each launch of the counted replay, in order (at most MAX_LAUNCH_ROWS).")
    launch_total: int = Field(default=0, ge=0, description="Triton launches in the counted replay.")
    programs: int = Field(default=0, ge=0, description="Program instances over every launch.")
    bytes_read: int = Field(default=0, ge=0, description="Bytes read over every launch.")
    bytes_written: int = Field(default=0, ge=0, description="Bytes written over every launch.")
    flops: int = Field(default=0, ge=0, description="FLOPs over every launch.")
    dot_flops: int = Field(default=0, ge=0, description="Of those, tl.dot's.")
    special: int = Field(default=0, ge=0, description="Special-function lanes over every launch.")
    buffers: list[BufferCount] = Field(default_factory=list, description="Bytes by buffer (only buffers a kernel touched).")
    unattributed_bytes: int = Field(default=0, ge=0, description="Bytes at addresses outside every buffer the replay built.")
    torch_ops: int = Field(default=0, ge=0, description="Torch ops with an effect the tape ran beside its launches (rows of their own; not in the totals).")


@dataclass
class _Buffer:
    name: str
    start: int
    size: int
    read: int = 0
    written: int = 0


@dataclass
class _Launch:
    kernel: str
    torch_op: bool = False
    programs: int = 0
    read: int = 0
    written: int = 0
    flops: int = 0
    dot_flops: int = 0
    special: int = 0


@dataclass
class TrafficCounter:
    """Counts while active (`with counter:`); `begin(kernel)` before each launch. Buffers are
    (name, start address, size in bytes) of the storages the replay built (more with `add_buffer`)."""

    buffers: list[tuple[str, int, int]] = field(default_factory=list)
    launches: list[_Launch] = field(default_factory=list)
    unattributed: int = 0
    _restore: list[tuple[Any, str, Any]] = field(default_factory=list)
    _table: list[_Buffer] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name, start, size in self.buffers:
            self.add_buffer(name, start, size)

    # -- what the replay calls ----------------------------------------------------------------

    def add_buffer(self, name: str, start: int, size: int) -> None:
        """A storage the replay built (inputs and external buffers before it runs, allocations as its ops make them)."""
        if size <= 0 or start in self._starts:
            return
        index = bisect.bisect(self._starts, start)
        self._starts.insert(index, start)
        self._table.insert(index, _Buffer(name, start, size))

    def begin(self, kernel: str) -> None:
        self.launches.append(_Launch(kernel))

    def torch_op(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        """A torch op the replay ran (not an allocation): a row of its own, bytes and FLOPs as `op_cost` has them."""
        moved = op_cost(func, args, kwargs, out)
        if moved is None:
            return
        read, written, flops = moved
        dot = flops if op_on_tensor_cores(func) else 0
        self.launches.append(_Launch(str(getattr(func, "_overloadpacket", func)), torch_op=True, read=read, written=written, flops=flops, dot_flops=dot))

    def __enter__(self) -> TrafficCounter:
        from triton.runtime import interpreter

        builder = interpreter.InterpreterBuilder
        counter = self

        def wrap(owner: Any, name: str, make: Any) -> None:
            original = getattr(owner, name)
            self._restore.append((owner, name, original))
            setattr(owner, name, make(original))

        def masked_load(original: Any) -> Any:
            # (Keyword arguments too: the interpreter's tensor-descriptor load passes cache_modifier= and the rest by name.)
            def run(builder_self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any, **options: Any) -> Any:
                counter._memory(ptrs, mask, read=True)
                return original(builder_self, ptrs, mask, other, *rest, **options)

            return run

        def masked_store(original: Any) -> Any:
            def run(builder_self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any, **options: Any) -> Any:
                counter._memory(ptrs, mask, read=False)
                return original(builder_self, ptrs, value, mask, *rest, **options)

            return run

        def atomic_rmw(original: Any) -> Any:
            def run(builder_self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any, **options: Any) -> Any:
                lanes = counter._atomic(ptr, mask)
                if getattr(op, "name", str(op)) in FLOAT_ATOMICS and ptr.get_element_ty().is_floating():
                    counter._flops(lanes)
                return original(builder_self, op, ptr, val, mask, *rest, **options)

            return run

        def atomic_cas(original: Any) -> Any:
            def run(builder_self: Any, ptr: Any, cmp: Any, val: Any, *rest: Any, **options: Any) -> Any:
                counter._atomic(ptr, None)
                return original(builder_self, ptr, cmp, val, *rest, **options)

            return run

        def dot(original: Any) -> Any:
            def run(builder_self: Any, a: Any, b: Any, d: Any, *rest: Any, **options: Any) -> Any:
                flops = dot_flops(np.asarray(a.data), np.asarray(b.data))
                counter._flops(flops)
                counter._current().dot_flops += flops
                return original(builder_self, a, b, d, *rest, **options)

            return run

        def lanes(original: Any, per_lane: int, special: bool = False) -> Any:
            def run(builder_self: Any, *args: Any) -> Any:
                result = original(builder_self, *args)
                if _floating(result):
                    count = int(np.size(result.data))
                    counter._flops(per_lane * count)
                    if special:
                        counter._current().special += count
                return result

            return run

        def extern(original: Any) -> Any:
            def run(builder_self: Any, lib_name: Any, lib_path: Any, symbol: Any, args: Any, *rest: Any) -> Any:
                result = original(builder_self, lib_name, lib_path, symbol, args, *rest)
                if _floating(result):
                    per_lane, special = extern_cost(str(symbol))
                    count = int(np.size(result.data))
                    counter._flops(per_lane * count)
                    if special:
                        counter._current().special += count
                return result

            return run

        def grid(original: Any) -> Any:
            def run(builder_self: Any, nx: int, ny: int, nz: int) -> Any:
                if counter.launches:
                    counter.launches[-1].programs += int(nx) * int(ny) * int(nz)
                return original(builder_self, nx, ny, nz)

            return run

        wrap(builder, "create_masked_load", masked_load)
        wrap(builder, "create_masked_store", masked_store)
        wrap(builder, "create_atomic_rmw", atomic_rmw)
        wrap(builder, "create_atomic_cas", atomic_cas)
        wrap(builder, "create_dot", dot)
        wrap(builder, "set_grid_dim", grid)
        wrap(builder, "create_fma", lambda original: lanes(original, 2))
        wrap(builder, "create_clampf", lambda original: lanes(original, 2))
        wrap(builder, "create_extern_elementwise", extern)
        for name in FLOAT_BINARY + FLOAT_UNARY:
            if hasattr(builder, name):
                wrap(builder, name, lambda original, special=name in SPECIAL: lanes(original, 1, special))
        reduce_ops = interpreter.ReduceOps

        def reduction(original: Any) -> Any:
            def run(ops_self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
                data = getattr(getattr(input[0] if isinstance(input, tuple) else input, "handle", None), "data", None)
                if data is not None and np.issubdtype(np.asarray(data).dtype, np.floating):
                    size = int(np.size(data))
                    axis = ops_self.axis
                    kept = size // int(np.shape(data)[axis]) if axis is not None and np.ndim(data) else 1
                    counter._flops(max(0, size - kept))
                return original(ops_self, input, *args, **kwargs)

            return run

        wrap(reduce_ops, "sum", reduction)
        wrap(reduce_ops, "min_max", reduction)

        def scan(original: Any) -> Any:
            def run(ops_self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
                data = getattr(getattr(input, "handle", None), "data", None)
                if data is not None and np.issubdtype(np.asarray(data).dtype, np.floating) and np.ndim(data):
                    size = int(np.size(data))
                    counter._flops(max(0, size - size // int(np.shape(data)[ops_self.axis])))
                return original(ops_self, input, *args, **kwargs)

            return run

        scan_ops = interpreter.ScanOps
        wrap(scan_ops, "cumsum", scan)
        wrap(scan_ops, "cumprod", scan)
        return self

    def __exit__(self, *_: object) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()

    # -- counting -----------------------------------------------------------------------------

    def _current(self) -> _Launch:
        if not self.launches:
            self.launches.append(_Launch("(outside a launch)"))
        return self.launches[-1]

    def _flops(self, count: int) -> None:
        self._current().flops += count

    def _memory(self, ptrs: Any, mask: Any, read: bool) -> None:
        addresses = np.asarray(ptrs.data)
        if mask is not None:
            lanes = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            addresses = addresses[lanes]
        distinct = np.unique(addresses.ravel())
        size = _element_size(ptrs)
        self._attribute(distinct, size, read=read, written=not read)

    def _atomic(self, ptr: Any, mask: Any) -> int:
        """Attribute an atomic's read and write of each unmasked lane; the number of those lanes."""
        addresses = np.asarray(ptr.data)
        if mask is not None:
            addresses = addresses[np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)]
        self._attribute(addresses.ravel(), _element_size(ptr), read=True, written=True)
        return int(addresses.size)

    def _attribute(self, addresses: np.ndarray, size: int, read: bool, written: bool) -> None:
        moved = int(addresses.size) * size
        launch = self._current()
        if read:
            launch.read += moved
        if written:
            launch.written += moved
        if not addresses.size:
            return
        if not self._table:
            self.unattributed += moved
            return
        slots = np.searchsorted(np.asarray(self._starts, dtype=np.uint64), addresses.astype(np.uint64), side="right") - 1
        for slot, count in zip(*np.unique(slots, return_counts=True)):
            entry = self._table[int(slot)] if slot >= 0 else None
            nbytes = int(count) * size
            if entry is None:
                self.unattributed += nbytes
                continue
            inside = addresses[slots == slot]
            outside = int(np.count_nonzero(inside.astype(np.uint64) >= np.uint64(entry.start + entry.size)))
            self.unattributed += outside * size
            nbytes -= outside * size
            if read:
                entry.read += nbytes
            if written:
                entry.written += nbytes

    def counts(self, torch_ops: int = 0) -> TrafficCounts:
        rows = [
            LaunchCount(
                kernel=launch.kernel,
                torch_op=launch.torch_op,
                programs=launch.programs,
                bytes_read=launch.read,
                bytes_written=launch.written,
                flops=launch.flops,
                dot_flops=launch.dot_flops,
                special=launch.special,
            )
            for launch in self.launches
        ]
        kernels = [row for row in rows if not row.torch_op]
        return TrafficCounts(
            launches=rows[:MAX_LAUNCH_ROWS],
            launch_total=len(kernels),
            programs=sum(row.programs for row in kernels),
            bytes_read=sum(row.bytes_read for row in kernels),
            bytes_written=sum(row.bytes_written for row in kernels),
            flops=sum(row.flops for row in kernels),
            dot_flops=sum(row.dot_flops for row in kernels),
            special=sum(row.special for row in kernels),
            buffers=[
                BufferCount(name=entry.name, bytes=entry.size, bytes_read=entry.read, bytes_written=entry.written)
                for entry in self._table
                if entry.read or entry.written
            ],
            unattributed_bytes=self.unattributed,
            torch_ops=torch_ops,
        )


def _nbytes(tensor: Any) -> int:
    return int(tensor.numel()) * int(tensor.element_size())


def op_cost(func: Any, args: Any, kwargs: Any, out: Any) -> tuple[int, int, int] | None:
    """(bytes read, bytes written, FLOPs) of one aten op as eager runs it: each distinct tensor
    argument read once, each tensor result written once, FLOPs from torch's flop counter
    formulas (matmuls, convolutions, attention) or one per element of the largest floating
    argument of a pointwise or reduction op. None for a view or an op without a tensor result."""
    import torch
    from torch.utils._pytree import tree_leaves
    from torch.utils.flop_counter import flop_registry

    if getattr(func, "is_view", False):
        return None
    outputs = [leaf for leaf in tree_leaves(out) if isinstance(leaf, torch.Tensor)]
    if not outputs:
        return None
    seen: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
    read = 0
    for leaf in tree_leaves((args, kwargs or {})):
        if isinstance(leaf, torch.Tensor) and leaf.numel() > 1:
            key = (leaf.data_ptr(), tuple(leaf.shape), tuple(leaf.stride()))
            if key not in seen:
                seen.add(key)
                read += _nbytes(leaf)
    written = sum(_nbytes(leaf) for leaf in outputs)
    formula = flop_registry.get(getattr(func, "_overloadpacket", None))
    tags = getattr(func, "tags", ())
    if formula is not None:
        flops = int(formula(*args, **(kwargs or {}), out_val=out))
    elif torch.Tag.pointwise in tags or torch.Tag.reduction in tags:
        floating = [leaf for leaf in tree_leaves(args) if isinstance(leaf, torch.Tensor) and leaf.is_floating_point()]
        flops = max((int(leaf.numel()) for leaf in floating), default=0)
    else:
        flops = 0
    return read, written, flops


def op_on_tensor_cores(func: Any) -> bool:
    """Whether torch's FLOP counter has a formula for the aten op (matmuls, convolutions, attention): tensor-core work."""
    from torch.utils.flop_counter import flop_registry

    return getattr(func, "_overloadpacket", None) in flop_registry


def dot_flops(a: np.ndarray, b: np.ndarray) -> int:
    """2·m·n·k of one `tl.dot` of a [..., M, K] and b [..., K, N], summed over the batch, with m, n
    and k the rows of a, columns of b and shared indices that hold any nonzero value (zero tile
    padding is not counted: a row of a that is all zero contributes nothing to the product)."""
    if a.ndim < 2 or b.ndim < 2:
        return 0
    live_a, live_b = a != 0, b != 0
    rows = np.count_nonzero(live_a.any(axis=-1), axis=-1)
    cols = np.count_nonzero(live_b.any(axis=-2), axis=-1)
    shared = np.count_nonzero(live_a.any(axis=-2) & live_b.any(axis=-1), axis=-1)
    return int(2 * np.sum(np.asarray(rows, dtype=np.int64) * cols * shared))


@functools.cache
def _extern_names() -> dict[str, str]:
    import inspect

    import triton.language.extra.cuda.libdevice as cuda_libdevice

    from .interpreter.libdevice import symbol_names

    return symbol_names(inspect.getsource(cuda_libdevice))


def extern_cost(symbol: str) -> tuple[int, bool]:
    """(FLOPs per lane, whether a special function) of a floating extern (libdevice) call, by its symbol."""
    try:
        name = _extern_names().get(symbol) or symbol.removeprefix("__nv_")
    except Exception:  # noqa: BLE001 - no libdevice source: name it by the symbol
        name = symbol.removeprefix("__nv_")
    if EXTERN_FREE.search(name):
        return 0, False
    if EXTERN_FMA.match(name):
        return 2, False
    if EXTERN_PLAIN.match(name):
        return 1, False
    return 1, True


def _floating(handle: Any) -> bool:
    data = getattr(handle, "data", None)
    return data is not None and np.issubdtype(np.asarray(data).dtype, np.floating)


def _element_size(ptrs: Any) -> int:
    """Bytes of one element a pointer tensor points at (int1 counts as one byte, as Triton stores it)."""
    element = ptrs.get_element_ty()
    return max(1, int(element.primitive_bitwidth) // 8)


def named_buffers(storages: Iterable[tuple[str, Any]]) -> list[tuple[str, int, int]]:
    """(name, start address, size) for `(name, torch.UntypedStorage)` pairs, the first name of each storage kept."""
    seen: dict[int, tuple[str, int, int]] = {}
    for name, storage in storages:
        start = int(storage.data_ptr())
        if start not in seen:
            seen[start] = (name, start, int(storage.nbytes()))
    return list(seen.values())
