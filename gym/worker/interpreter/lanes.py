"""Lane-level semantics inside one program instance, as a GPU gives them (not as the interpreter did).

Triton's interpreter runs a program's block operations as numpy calls, one element after
another in index order, so two things that race on a GPU were deterministic and race-free:

- **Atomics within one program.** `tl.atomic_add` (and every other atomic) on a block whose
  lanes hit the same address applied its lanes in index order, so a float sum came out with
  the same bits every run, and the old values an integer atomic hands back (`slot =
  tl.atomic_add(counter + bucket, 1)`) came out in ascending lane order. On a GPU the lanes
  are threads of several warps, and same-address atomics serialise in an unspecified order.
  Here the active lanes of every atomic (rmw and cas) with more than one lane apply in a
  secret random order (a permutation drawn from os.urandom for that call alone, captured at
  import); the old values still go back to the lane that got them. Integer add / and / or /
  xor / max / min leave the same memory in any order, so only the old values they return
  move; a float sum's bits move as on a GPU. A block whose addresses strictly increase has
  no two lanes on one address and is applied as it is (no draw).
- **Reads of another lane's store without a barrier.** `tl.store` then `tl.load` in the same
  program returned the new value to every lane; on a GPU, a lane reading an address another
  lane (thread) stored since the last `tl.debug_barrier()` races with that store and may read
  the old value. Here each program keeps a log of the addresses its stores wrote since its
  last barrier (which lane wrote each, and the value it held before the first such store);
  a load by a lane that did not itself store that address since the barrier reads the value
  from before the store (stale), one outcome a GPU may give. A lane reading back its own
  stores, a load after `tl.debug_barrier()`, and reads of what other programs wrote are
  unchanged. An atomic on a single address (a scalar: a ticket, a lock, a semaphore) is a
  barrier too, as Triton lowers it: one thread performs it and hands the old value to the
  others through shared memory behind a barrier (the "last block reduces" pattern relies on it).

A lane is an element's flat (row-major) index in the operation's block: the element a GPU
thread holds at that position in the default layout, the same for a load and a store of one
shape; a scalar is lane 0. Only loads of exactly the stored addresses with the stored
element size are compared (a reinterpreting load of another width reads memory as it is).

Cost: an atomic with lanes on one address draws one permutation (about 20 us for 1024 lanes);
a store copies the addresses it wrote and their old values (one extra vectorised read); a
load is compared with the log only when the program stored since its last barrier and the
load's address range meets the stored range.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

Array = Any

_urandom = os.urandom
_generator = np.random.Generator
_pcg64 = np.random.PCG64
_frombuffer = np.frombuffer
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_TYPESTR = {size: np.dtype(kind).str for size, kind in _UNSIGNED.items()}


def permutation(count: int) -> Array:
    """0..count-1 in a fresh random order, from 16 bytes of os.urandom drawn for this call alone (no state kept)."""
    return _generator(_pcg64(_frombuffer(_urandom(16), dtype=np.uint64))).permutation(count)


def increasing(addresses: Array) -> bool:
    """Whether the flat addresses strictly increase (then no two lanes share one)."""
    return addresses.size < 2 or bool((addresses[1:] > addresses[:-1]).all())


def _lanes(lanes: Array | None, addresses: Array) -> Array:
    return np.arange(addresses.size) if lanes is None else lanes


class _Memory:
    """`count` elements of `typestr` at host address `address`, for numpy to copy (no ctypes: the worker's
    audit hooks refuse it). Only ever pointed at addresses a store is about to write."""

    def __init__(self, address: int, count: int, typestr: str) -> None:
        self.__array_interface__ = {"data": (address, True), "shape": (count,), "typestr": typestr, "version": 3}


def contiguous_bits(addresses: Array, itemsize: int) -> Array | None:
    """What the consecutive elements at `addresses` hold now, as unsigned integers (None: not consecutive)."""
    count = addresses.size
    first = int(addresses[0])
    if int(addresses[-1]) - first != (count - 1) * itemsize or not increasing(addresses):
        return None
    return np.array(_Memory(first, count, _TYPESTR[itemsize]))


class StoreLog:
    """What one program stored since its last barrier: per store, the addresses, lanes and old bits."""

    __slots__ = ("chunks", "high", "low")

    def __init__(self) -> None:
        self.chunks: list[tuple[Array, Array | None, Array, int]] = []
        self.low = 0
        self.high = -1

    def clear(self) -> None:
        self.chunks = []
        self.low, self.high = 0, -1

    def record(self, addresses: Array, lanes: Array | None, bits: Array, low: int, high: int) -> None:
        """A store wrote `addresses` (flat, active lanes only; bytes `low`..`high`) from `lanes` (None: lane i
        wrote addresses[i]); `bits` is what they held before, as unsigned integers of the element's width."""
        if not self.chunks:
            self.low, self.high = low, high
        else:
            self.low, self.high = min(self.low, low), max(self.high, high)
        self.chunks.append((addresses, lanes, bits, bits.dtype.itemsize))

    def stale(self, addresses: Array, lanes: Array, itemsize: int) -> tuple[Array, Array] | None:
        """For a load of `addresses` by `lanes` (flat, active lanes only): which of them read another lane's
        unsynchronised store (positions into `addresses`) and the bits they read instead, or None."""
        chunks = [chunk for chunk in self.chunks if chunk[3] == itemsize]
        if not chunks:
            return None
        if len(chunks) == 1:
            stored, stored_lanes, old = chunks[0][0], _lanes(chunks[0][1], chunks[0][0]), chunks[0][2]
        else:
            stored = np.concatenate([chunk[0] for chunk in chunks])
            stored_lanes = np.concatenate([_lanes(chunk[1], chunk[0]) for chunk in chunks])
            old = np.concatenate([chunk[2] for chunk in chunks])
        # Unique stored addresses; `first` is each one's earliest store, whose old value is what others may read.
        unique, first = np.unique(stored, return_index=True)
        where: Array = np.minimum(np.searchsorted(unique, addresses), unique.size - 1)
        hit = unique[where] == addresses
        if not hit.any():
            return None
        positions = np.flatnonzero(hit)
        where = where[positions]
        # Drop the hits where this very lane stored that address since the barrier (it reads its own store).
        span = int(max(int(stored_lanes.max()), int(lanes.max()))) + 1
        stored_keys = np.searchsorted(unique, stored).astype(np.int64) * span + stored_lanes
        load_keys = where.astype(np.int64) * span + lanes[positions]
        foreign = ~np.isin(load_keys, stored_keys)
        if not foreign.any():
            return None
        return positions[foreign], old[first[where[foreign]]]


class _State:
    log: StoreLog | None = None


STATE = _State()


def begin_program() -> StoreLog | None:
    """A program starts: a fresh store log; returns the one to restore when it ends (programs may nest)."""
    saved = STATE.log
    STATE.log = StoreLog()
    return saved


def end_program(saved: StoreLog | None) -> None:
    STATE.log = saved


def _flat(data: Array, shape: tuple[int, ...]) -> Array:
    if data.shape != shape:
        data = np.broadcast_to(data, shape)
    return data.reshape(-1)


def _active(ptrs: Array, mask: Any) -> tuple[Array, Array | None]:
    """Flat addresses and flat lane indices of the active lanes (lanes None: all of them, in order);
    `mask` is a handle, or an array for block pointers."""
    addresses = ptrs.reshape(-1)
    flags = _flat(mask if isinstance(mask, np.ndarray) else np.asarray(mask.data), ptrs.shape)
    if flags.all():
        return addresses, None
    lanes = np.flatnonzero(flags)
    return addresses[lanes], lanes


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """Secret lane order for atomics; stale reads of other lanes' unsynchronised stores (before `order`)."""
    from triton.runtime import interpreter

    builder_class = interpreter.InterpreterBuilder
    handle = interpreter.TensorHandle
    atomic_rmw = builder_class.create_atomic_rmw
    atomic_cas = builder_class.create_atomic_cas
    masked_load = builder_class.create_masked_load
    masked_store = builder_class.create_masked_store
    barrier = builder_class.create_barrier
    state = STATE

    def _scalar_synchronises() -> None:
        # Triton lowers an atomic on a scalar with one thread doing it and the old value broadcast
        # through shared memory behind a barrier, so the program's earlier stores are visible after it.
        log = state.log
        if log is not None:
            log.clear()

    def _atomic_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, sem: Any, scope: Any) -> Any:
        shape = ptr.data.shape
        addresses = ptr.data.reshape(-1)
        if addresses.size == 1:
            result = atomic_rmw(self, op, ptr, val, mask, sem, scope)
            _scalar_synchronises()
            return result
        if increasing(addresses):
            return atomic_rmw(self, op, ptr, val, mask, sem, scope)
        order = permutation(addresses.size)
        result = atomic_rmw(
            self,
            op,
            handle(addresses[order], ptr.dtype),
            handle(_flat(val.data, shape)[order], val.dtype),
            handle(_flat(mask.data, shape)[order], mask.dtype),
            sem,
            scope,
        )
        old = np.empty_like(result.data)
        old[order] = result.data
        return handle(old.reshape(shape), result.dtype)

    def _atomic_cas(self: Any, ptr: Any, cmp: Any, val: Any, sem: Any, scope: Any) -> Any:
        shape = ptr.data.shape
        addresses = ptr.data.reshape(-1)
        if addresses.size == 1:
            result = atomic_cas(self, ptr, cmp, val, sem, scope)
            _scalar_synchronises()
            return result
        if increasing(addresses):
            return atomic_cas(self, ptr, cmp, val, sem, scope)
        order = permutation(addresses.size)
        result = atomic_cas(
            self,
            handle(addresses[order], ptr.dtype),
            handle(_flat(cmp.data, shape)[order], cmp.dtype),
            handle(_flat(val.data, shape)[order], val.dtype),
            sem,
            scope,
        )
        old = np.empty_like(result.data)
        old[order] = result.data
        return handle(old.reshape(shape), result.dtype)

    def _masked_store(self: Any, ptrs: Any, value: Any, mask: Any, cache_modifier: Any, eviction_policy: Any) -> Any:
        log = state.log
        if log is not None:
            itemsize = value.data.dtype.itemsize
            addresses, lanes = _active(ptrs.data, mask)
            if addresses.size and itemsize in _UNSIGNED:
                bits = contiguous_bits(addresses, itemsize)
                if bits is not None:
                    low = int(addresses[0])
                    high = int(addresses[-1]) + itemsize - 1
                else:
                    before = masked_load(self, ptrs, mask, None, None, None, False).data.reshape(-1)
                    bits = (before if lanes is None else before[lanes]).view(_UNSIGNED[itemsize])
                    low, high = int(addresses.min()), int(addresses.max()) + itemsize - 1
                log.record(addresses.copy() if lanes is None else addresses, lanes, bits, low, high)
        return masked_store(self, ptrs, value, mask, cache_modifier, eviction_policy)

    def _masked_load(self: Any, ptrs: Any, mask: Any, other: Any, cache_modifier: Any, eviction_policy: Any, is_volatile: Any) -> Any:
        result = masked_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile)
        log = state.log
        if log is None or not log.chunks:
            return result
        pointers = ptrs.data
        # Every lane's address, masked or not, bounds the active ones: most loads miss the stored range.
        if int(pointers.max()) < log.low or int(pointers.min()) > log.high:
            return result
        addresses, lanes = _active(pointers, mask)
        if not addresses.size:
            return result
        lanes = _lanes(lanes, addresses)
        found = log.stale(addresses, lanes, result.data.dtype.itemsize)
        if found is None:
            return result
        positions, bits = found
        data = np.array(result.data, copy=True).reshape(-1)
        data[lanes[positions]] = bits.view(data.dtype)
        return handle(data.reshape(result.data.shape), result.dtype)

    def _barrier(self: Any) -> Any:
        log = state.log
        if log is not None:
            log.clear()
        return barrier(self)

    patch(builder_class, "create_atomic_rmw", _atomic_rmw)
    patch(builder_class, "create_atomic_cas", _atomic_cas)
    patch(builder_class, "create_masked_store", _masked_store)
    patch(builder_class, "create_masked_load", _masked_load)
    patch(builder_class, "create_barrier", _barrier)
