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
- FLOPs: 2·M·N·K per `tl.dot` (times its batch); one per lane of each floating add, sub,
  mul, div, rem, min, max and math function; two per FMA; n - 1 per reduced row of a
  `tl.sum` / `tl.max` / `tl.min`. Integer and pointer arithmetic, casts and libdevice calls count
  nothing.
- per launch: the kernel, the programs its grid ran; per buffer: the bytes attributed to
  each storage the replay built (inputs by name, the call's outputs, scratch).
"""

from __future__ import annotations

import bisect
import math
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
        self.launches.append(_Launch(str(getattr(func, "_overloadpacket", func)), torch_op=True, read=read, written=written, flops=flops))

    def __enter__(self) -> TrafficCounter:
        from triton.runtime import interpreter

        builder = interpreter.InterpreterBuilder
        counter = self

        def wrap(owner: Any, name: str, make: Any) -> None:
            original = getattr(owner, name)
            self._restore.append((owner, name, original))
            setattr(owner, name, make(original))

        def masked_load(original: Any) -> Any:
            def run(builder_self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
                counter._memory(ptrs, mask, read=True)
                return original(builder_self, ptrs, mask, other, *rest)

            return run

        def masked_store(original: Any) -> Any:
            def run(builder_self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
                counter._memory(ptrs, mask, read=False)
                return original(builder_self, ptrs, value, mask, *rest)

            return run

        def atomic_rmw(original: Any) -> Any:
            def run(builder_self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
                counter._atomic(ptr, mask)
                return original(builder_self, op, ptr, val, mask, *rest)

            return run

        def atomic_cas(original: Any) -> Any:
            def run(builder_self: Any, ptr: Any, cmp: Any, val: Any, *rest: Any) -> Any:
                counter._atomic(ptr, None)
                return original(builder_self, ptr, cmp, val, *rest)

            return run

        def dot(original: Any) -> Any:
            def run(builder_self: Any, a: Any, b: Any, d: Any, *rest: Any) -> Any:
                shape_a, shape_b = np.shape(a.data), np.shape(b.data)
                if len(shape_a) >= 2 and len(shape_b) >= 2:
                    batch = math.prod(shape_a[:-2]) if len(shape_a) > 2 else 1
                    counter._flops(2 * batch * shape_a[-2] * shape_a[-1] * shape_b[-1])
                return original(builder_self, a, b, d, *rest)

            return run

        def lanes(original: Any, per_lane: int) -> Any:
            def run(builder_self: Any, *args: Any) -> Any:
                result = original(builder_self, *args)
                if _floating(result):
                    counter._flops(per_lane * int(np.size(result.data)))
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
        for name in FLOAT_BINARY + FLOAT_UNARY:
            if hasattr(builder, name):
                wrap(builder, name, lambda original: lanes(original, 1))
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

    def _atomic(self, ptr: Any, mask: Any) -> None:
        addresses = np.asarray(ptr.data)
        if mask is not None:
            addresses = addresses[np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)]
        self._attribute(addresses.ravel(), _element_size(ptr), read=True, written=True)

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
