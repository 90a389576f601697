"""Replay one call's tape (gym.worker.tape) in the witness: kernels only, on fresh inputs.

The kernels come from the kernels file the trusted side extracted from the
submission (its `@triton.jit` functions and module constants, nothing else), so no
other code of the submission exists here. Buffers are rebuilt from the tape: inputs
hold the fresh inputs in the layout the call was given, external buffers and fresh
allocations hold random bytes drawn in the witness (`Fill`: no pattern a kernel could
recognise, so a replay looks like any call), except an external buffer that held one
value repeated when the call began using it (a zeroed semaphore: `Buffer.start`), which
holds that value again; each tensor is a view of its buffer.

The tape is a program, never evidence: every label that decides a verdict is derived
here from what runs. An op step names an aten overload; which op it is (the packet the
torch policy judges) and whether it allocates or writes (and so is run) come from that
overload's own schema, and a step whose recorded labels disagree with them cannot be
replayed. A launch names a jit function of the kernels file and the identity of its
code (`gym.worker.tape.code_identity`); a function not in the file under that name
with that code cannot be replayed. What the tape says the call returned is what the
replay returns.

Output provenance (`TapeReplay.provenance`): the tape's ops are run twice more with
every launch left out, once as recorded and once with what torch's copies, casts and
strided views wrote replaced by other bytes (allocations, constant fills and a copy of
a whole input into a whole buffer of its shape are initialisation and stay). Where the
two differ, torch's plumbing made the value; the trusted side then checks those values
against the answer (gym.grading.judging.replay).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from .dtypes import DTYPES, bit_view, is_dense, same_bits
from .launched_modules import MODULE_PREFIX as LAUNCHED_PREFIX
from .launched_modules import attach as attach_launched
from .tape import CallTape, LaunchStep, OpStep, TensorRef, Value, call_signature, code_identity, has_effect, launch_buffers, packet_of
from .torch_policy import HOST_READ_OP, HOST_READ_PACKET, MAX_HOST_READS, PLUMBING, PLUMBING_OPS
from .traffic import TrafficCounter

# Allocation packets whose fresh memory is filled in the replay (the call saw undefined memory there).
ALLOCATIONS = frozenset({"aten.empty", "aten.empty_like", "aten.empty_strided", "aten.new_empty", "aten.new_empty_strided"})
# Ops that initialise (allocations and constant fills): what they write is never the kernels' work to check.
INITIALISERS = frozenset(op for entry in PLUMBING if entry.category == "allocation" for op in entry.aten)
# Copies that initialise when they copy a whole input, unchanged, into a whole buffer of its shape
# (a clone of an input that a kernel then updates in place, as index_add does).
WHOLE_COPIES = frozenset({"aten.clone", "aten._to_copy", "aten.copy_"})
# Bytes of the random pattern fresh memory is filled with.
FILL_BYTES = 1 << 16


class Fill:
    """Random bytes (os.urandom, drawn in the witness once its submission's process is gone) that
    fresh memory is filled with; `inverted` fills with every bit flipped."""

    def __init__(self, device: torch.device) -> None:
        self.pattern = torch.frombuffer(bytearray(os.urandom(FILL_BYTES)), dtype=torch.uint8).to(device)
        self.inverse = self.pattern.bitwise_not()

    def storage(self, storage: torch.UntypedStorage, inverted: bool = False) -> None:
        """Fill every byte of `storage`."""
        size = storage.nbytes()
        flat = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage, 0, (size,), (1,))
        pattern = self.inverse if inverted else self.pattern
        whole, rest = divmod(size, FILL_BYTES)
        if whole:
            flat[: whole * FILL_BYTES].view(whole, FILL_BYTES).copy_(pattern)
        if rest:
            flat[whole * FILL_BYTES :].copy_(pattern[:rest])

    def tensor(self, tensor: torch.Tensor, inverted: bool = False) -> None:
        """Fill the elements `tensor` views (any layout) with pattern bytes."""
        if tensor.numel() == 0:
            return
        filled = torch.empty(tensor.shape, dtype=tensor.dtype, device=tensor.device)
        self.storage(filled.untyped_storage(), inverted)
        tensor.copy_(filled)


def repeat(storage: torch.UntypedStorage, value: bytes) -> None:
    """Fill `storage` with `value` repeated (an external buffer's `Buffer.start`)."""
    size = storage.nbytes()
    if size % len(value):
        raise ReplayError(f"a buffer of {size} bytes cannot hold a {len(value)}-byte value repeated")
    flat = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage, 0, (size,), (1,))
    flat.view(size // len(value), len(value)).copy_(torch.tensor(list(value), dtype=torch.uint8, device=storage.device))


class ReplayError(Exception):
    """The tape cannot be replayed as recorded (the message says what)."""


class HostReadDiffers(ReplayError):
    """A host read gave the replay another value than the call (its later sizes and grids no longer fit)."""


def load_kernels(path: Path, name: str, interpret: bool, launched: Path | None = None) -> ModuleType:
    """Import the kernels file as module `name`, its jit functions interpreted or compiled; with
    `launched` (the replay folder's staged launched modules), each bound on it by its key
    (gym.worker.launched_modules)."""
    from triton import knobs

    before = knobs.runtime.interpret
    knobs.runtime.interpret = interpret
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ReplayError(f"cannot load {path.name}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if launched is not None:
            attach_launched(module, launched, name)
    finally:
        knobs.runtime.interpret = before
    return module


def kernel_named(module: ModuleType, qualname: str, code: str | None = None) -> Any:
    """The jit function `qualname` ("name" or "Class.name") of the kernels module; with `code`, its
    code must have that identity (`gym.worker.tape.code_identity`), or the launch ran another function."""
    from triton.runtime.jit import KernelInterface

    target: Any = module
    for part in qualname.split("."):
        target = vars(target).get(part) if isinstance(target, (ModuleType, type)) else None
        if target is None and qualname.startswith(LAUNCHED_PREFIX):
            raise ReplayError(
                f"the call launched {qualname.partition('.')[2]!r} from a module outside the submission ({qualname.partition('.')[0]}) "
                "whose source was not sent back and vetted (gym.worker.launched_modules)"
            )
        if target is None:
            raise ReplayError(f"the call launched {qualname!r}, which is not a module-level @triton.jit function of the file")
    if not isinstance(target, KernelInterface):
        raise ReplayError(f"{qualname!r} is not a @triton.jit function")
    if code is not None:
        function = getattr(target, "fn", None)
        if function is None or code_identity(function) != code:
            raise ReplayError(
                f"the call launched a function named {qualname!r} whose code is not the file's {qualname!r}: "
                "a jit function must be defined in the file (at module level or in a class body), not made or changed at run time"
            )
    return target


def dtype_from_name(name: str) -> torch.dtype:
    """A tape's dtype name: the wire names (gym.worker.dtypes) or any other torch dtype by its attribute
    name (float8 formats, complex); ReplayError for anything that is not a torch dtype."""
    known = DTYPES.get(name)
    if known is not None:
        return known
    found = getattr(torch, name, None) if name.isidentifier() else None
    if not isinstance(found, torch.dtype):
        raise ReplayError(f"unknown dtype {name!r}")
    return found


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


class TapeReplay:
    """The buffers of one replay of one tape, on `device`."""

    def __init__(self, tape: CallTape, device: torch.device, inputs: dict[str, torch.Tensor], memory_bytes: int | None = None) -> None:
        if tape.truncated is not None:
            raise ReplayError(f"the call's tape is incomplete: {tape.truncated}")
        claimed = sum(buffer.nbytes for buffer in tape.buffers)
        if memory_bytes is not None and claimed > memory_bytes:
            # The recorder keeps every storage a call touches alive until the call ends, so they all fit at once there.
            raise ReplayError(f"the tape's buffers add up to {claimed} bytes, more than the call's sandbox could hold ({memory_bytes})")
        self.tape = tape
        self.device = device
        self.inputs = inputs
        self.storages: dict[int, torch.UntypedStorage] = {}
        self.fill = Fill(device)
        # The buffers made by the tape's allocation steps (by their overload), filled ahead of each run.
        self._allocated_buffers = {
            buffer.id
            for buffer in tape.buffers
            if buffer.origin == "step" and buffer.step is not None and buffer.step < len(tape.steps) and _allocates(tape.steps[buffer.step])
        }
        # The steps that are host reads the policy allows (gym.worker.torch_policy.HOST_READ_OP), derived
        # here: an integer or boolean tensor in a buffer an earlier launch was given, within MAX_HOST_READS.
        self._host_reads = _allowed_host_reads(tape)
        # Whether a run compares each host read with the call's (not in the ops-only provenance runs).
        self._checking_reads = False
        self.ops: Counter[str] = Counter()
        # Each effect op that is no plumbing (a task's anchor), as `call_signature` describes what ran.
        self.anchor_calls: list[str] = []
        self.launches = 0
        # While a counted run is under way (`count`): what its launches move and compute.
        self.counter: TrafficCounter | None = None
        self._counted_names: dict[int, str] = {}
        for buffer in tape.buffers:
            if buffer.origin == "input":
                if buffer.param not in inputs or buffer.view is None:
                    raise ReplayError(f"the tape's input {buffer.param!r} is not a tensor argument of the call")
                fresh = inputs[buffer.param]
                if list(fresh.shape) != buffer.view.shape or dtype_from_name(buffer.view.dtype) != fresh.dtype:
                    raise ReplayError(f"the tape's input {buffer.param!r} does not match the call's argument")
        self.reset()

    def reset(self) -> None:
        """Fresh buffers: inputs copied in, everything else the tape made or found filled with random bytes.
        The buffers the tape's allocations make are made and filled here too (`_allocated`), so a timed run
        pays for neither: the call's own `torch.empty` touched no memory."""
        self.storages = {}
        self.allocated: dict[int, torch.UntypedStorage] = {}
        for buffer in self.tape.buffers:
            if buffer.origin == "step":
                if buffer.id in self._allocated_buffers:
                    storage = torch.empty(buffer.nbytes, dtype=torch.uint8, device=self.device).untyped_storage()
                    self.fill.storage(storage)
                    self.allocated[buffer.id] = storage
                continue
            storage = torch.empty(buffer.nbytes, dtype=torch.uint8, device=self.device).untyped_storage()
            if buffer.origin == "external" and buffer.start is not None:
                repeat(storage, bytes.fromhex(buffer.start))
            else:
                self.fill.storage(storage)
            self.storages[buffer.id] = storage
            if buffer.origin == "input" and buffer.view is not None and buffer.param is not None:
                self.view(buffer.view).copy_(self.inputs[buffer.param])

    def view(self, ref: TensorRef) -> torch.Tensor:
        storage = self.storages.get(ref.buffer)
        if storage is None:
            raise ReplayError(f"a step used buffer {ref.buffer} before the step that makes it")
        dtype = dtype_from_name(ref.dtype)
        if len(ref.shape) != len(ref.strides) or any(size < 0 for size in ref.shape) or any(stride < 0 for stride in ref.strides):
            raise ReplayError("a tensor with a malformed shape or negative strides")
        if math.prod(ref.shape):
            last = ref.offset + sum((size - 1) * stride for size, stride in zip(ref.shape, ref.strides))
            if (last + 1) * _itemsize(dtype) > storage.nbytes():
                raise ReplayError(f"a view past the end of buffer {ref.buffer}")
        return torch.empty(0, dtype=dtype, device=self.device).set_(storage, ref.offset, ref.shape, ref.strides)

    def decode(self, value: Value) -> Any:
        kind = value.kind
        if kind == "tensor" and value.ref is not None:
            return self.view(value.ref)
        if kind in ("int", "float", "bool", "str"):
            return {"int": value.integer, "float": value.real, "bool": value.boolean, "str": value.text}[kind]
        if kind == "none":
            return None
        if kind in ("list", "tuple"):
            items = [self.decode(item) for item in value.items or []]
            return items if kind == "list" else tuple(items)
        if kind == "torch_dtype" and value.text is not None:
            return dtype_from_name(value.text)
        if kind == "device":
            return self.device
        if kind == "layout" and value.text in ("strided",):
            return torch.strided
        if kind == "memory_format" and value.text in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
            return getattr(torch, value.text)
        if kind == "tl_dtype" and value.text is not None:
            import triton.language as tl

            return tl.dtype(value.text)
        if kind == "constexpr" and value.items and len(value.items) == 1:
            import triton.language as tl

            return tl.constexpr(self.decode(value.items[0]))
        if kind == "descriptor" and value.ref is not None and value.descriptor is not None and len(value.descriptor) == 3:
            from triton.tools.tensor_descriptor import TensorDescriptor

            shape, strides, block = value.descriptor
            return TensorDescriptor(self.view(value.ref), shape, strides, block)
        raise ReplayError(f"an argument the replay cannot rebuild ({kind})")

    def buffer_names(self) -> dict[int, str]:
        """What each buffer is, for traffic attribution: an input's parameter, "output #k" for a
        buffer the call returned a view of, "scratch #k" for everything else."""
        returned: list[int] = []

        def collect(value: Value | None) -> None:
            if value is None:
                return
            if value.kind == "tensor" and value.ref is not None and value.ref.buffer not in returned:
                returned.append(value.ref.buffer)
            for item in value.items or []:
                collect(item)

        collect(self.tape.outputs)
        names: dict[int, str] = {}
        scratch = 0
        for buffer in self.tape.buffers:
            if buffer.origin == "input" and buffer.param is not None:
                names[buffer.id] = buffer.param
            elif buffer.id in returned:
                names[buffer.id] = f"output #{returned.index(buffer.id) + 1}"
            else:
                scratch += 1
                names[buffer.id] = f"scratch #{scratch}"
        return names

    def count(self, kernels: ModuleType, sync: Callable[[], None]) -> TrafficCounter:
        """One more run of every step (fresh buffers), interpreted, counting what the launches move."""
        self.reset()
        names = self._counted_names = self.buffer_names()
        self.counter = TrafficCounter([(names[id], int(storage.data_ptr()), int(storage.nbytes())) for id, storage in self.storages.items()])
        try:
            with self.counter:
                self.run(kernels, sync)
            return self.counter
        finally:
            self.counter = None

    def run(self, kernels: ModuleType, sync: Callable[[], None]) -> list[torch.Tensor]:
        """Every step in order; the tensors the call returned."""
        self.ops.clear()
        self.anchor_calls = []
        self.launches = 0
        self._checking_reads = True
        try:
            with torch.no_grad():
                for index, step in enumerate(self.tape.steps):
                    if isinstance(step, OpStep):
                        self._op(index, step)
                    else:
                        self._launch(kernels, step)
                sync()
                return self.outputs()
        finally:
            self._checking_reads = False

    def dry_run(self, each_launch: Callable[[LaunchStep, list[Any], dict[str, Any]], None]) -> None:
        """The ops only, with `each_launch(step, args, kwargs)` where each launch would run (its
        arguments decoded as they would be); then fresh buffers again."""
        with torch.no_grad():
            for index, step in enumerate(self.tape.steps):
                if isinstance(step, OpStep):
                    self._op(index, step)
                else:
                    each_launch(step, [self.decode(arg) for arg in step.args], {name: self.decode(value) for name, value in step.kwargs.items()})
        self.reset()

    def _op(self, index: int, step: OpStep) -> tuple[Any, list[Any], dict[str, Any], Any] | None:
        """Run one op step (when its overload allocates or writes); (overload, args, kwargs, result), or
        None for a view. Its packet and effect come from the overload itself, never from the tape."""
        func = _overload(step.op)
        packet, effect = packet_of(func), has_effect(func)
        if step.packet != packet or step.effect != effect:
            raise ReplayError(
                f"step {index} is recorded as {step.packet!r} (effect {step.effect}) but its overload {step.op!r} is {packet!r} (effect {effect})"
            )
        if packet == HOST_READ_PACKET:
            self._host_read(index, step, func)
            return None
        self.ops[packet] += 1
        if not effect:
            return None
        args = [self.decode(arg) for arg in step.args]
        kwargs = {name: self.decode(value) for name, value in step.kwargs.items()}
        try:
            result = func(*args, **kwargs)
        except RuntimeError as error:
            if packet not in ALLOCATIONS:
                raise
            raise ReplayError(f"step {index} ({step.op}) cannot allocate what the tape asks: {str(error)[:200]}") from None
        if packet not in PLUMBING_OPS:
            self.anchor_calls.append(call_signature(func, args, kwargs))
        if self.counter is not None and packet not in ALLOCATIONS:
            self.counter.torch_op(func, args, kwargs, result)
        made = [item for item in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(item, torch.Tensor)]
        for item, created in zip(made, step.creates):
            if created is None:
                continue
            buffer = next((b for b in self.tape.buffers if b.id == created), None)
            if buffer is None or buffer.origin != "step" or buffer.step != index:
                raise ReplayError(f"step {index} claims to make buffer {created}, which the tape says it does not")
            storage = item.untyped_storage()
            if storage.nbytes() < buffer.nbytes or (packet in ALLOCATIONS and storage.nbytes() != buffer.nbytes):
                # Checked before a byte of it is touched: an allocation the tape's arguments inflate is never filled.
                raise ReplayError(f"step {index} ({step.op}) made {storage.nbytes()} bytes where the call's made {buffer.nbytes}")
            if packet in ALLOCATIONS:
                prefilled = self.allocated.get(created)
                if prefilled is not None:  # its size is the buffer's, which the check above holds the op to
                    storage = prefilled
                else:
                    self.fill.storage(storage)
            self.storages[created] = storage
            if self.counter is not None:
                self.counter.add_buffer(self._counted_names.get(created, "scratch"), int(storage.data_ptr()), int(storage.nbytes()))
        return func, args, kwargs, result

    def _host_read(self, index: int, step: OpStep, func: Any) -> None:
        """A host read: counted as HOST_READ_OP when the policy allows it (else as the aten op, which is
        compute); in a full run, read from the replay's own buffer and compared with the call's value."""
        allowed = index in self._host_reads
        self.ops[HOST_READ_OP if allowed else HOST_READ_PACKET] += 1
        if not (allowed and self._checking_reads):
            return
        value = func(*[self.decode(arg) for arg in step.args])
        recorded = self.decode(step.read) if step.read is not None else None
        if recorded is None or value != recorded:
            raise HostReadDiffers(
                f"step {index}: the call read {recorded!r} on the host from a tensor a launch of the call was given, and the "
                f"replay reads {value!r} there; the sizes, grids and arguments the call derived from it no longer fit these inputs"
            )

    def _launch(self, kernels: ModuleType, step: LaunchStep) -> None:
        kernel = kernel_named(kernels, step.kernel, step.code)
        args = [self.decode(arg) for arg in step.args]
        kwargs = {name: self.decode(value) for name, value in step.kwargs.items()}
        if self.counter is not None:
            self.counter.begin(step.kernel.rpartition(".")[2])
        kernel[tuple(step.grid)](*args, **kwargs)
        self.launches += 1

    def compute_ops(self) -> int:
        """Ops with an effect other than allocations (the anchor ops a task lets stay in torch, copies),
        judged by each step's overload."""
        count = 0
        for step in self.tape.steps:
            if isinstance(step, OpStep):
                func = _overload(step.op)
                count += has_effect(func) and packet_of(func) not in ALLOCATIONS
        return count

    # -- provenance ---------------------------------------------------------------------------

    def provenance(self) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """The call's outputs as torch alone leaves them (every launch left out), and for each a
        mask of the elements torch's plumbing made: copies, casts and strided views of inputs or of
        other values, as opposed to initialisation (allocations, constant fills, a whole input
        copied unchanged into a whole buffer of its shape). What any other op (a task's anchor)
        made is filled in both runs: it is not plumbing. Fresh buffers again afterwards."""
        recorded = self._without_launches(refill_plumbing=False)
        refilled = self._without_launches(refill_plumbing=True)
        masks = [bit_view(a).ne(bit_view(b)) for a, b in zip(recorded, refilled)]
        self.reset()
        return recorded, masks

    def _without_launches(self, refill_plumbing: bool) -> list[torch.Tensor]:
        self.reset()
        with torch.no_grad():
            for index, step in enumerate(self.tape.steps):
                if not isinstance(step, OpStep):
                    continue
                ran = self._op(index, step)
                if ran is None:
                    continue
                func, args, kwargs, result = ran
                packet = packet_of(func)
                if packet in INITIALISERS or (packet in WHOLE_COPIES and self._copies_a_whole_input(step, packet, args, result)):
                    continue
                if packet in PLUMBING_OPS and not refill_plumbing:
                    continue
                for tensor in _written(func, args, result):
                    self.fill.tensor(tensor, inverted=packet in PLUMBING_OPS)
            return [tensor.clone() for tensor in self.outputs()]

    def _copies_a_whole_input(self, step: OpStep, packet: str, args: list[Any], result: Any) -> bool:
        """A clone, same-dtype copy or `copy_` of an input exactly as the call was given it, into a
        whole buffer of the same shape (element i of the copy is element i of the input)."""
        inputs = [buffer.view for buffer in self.tape.buffers if buffer.origin == "input" and buffer.view is not None]
        into = packet == "aten.copy_"
        source_arg = step.args[1] if into and len(step.args) > 1 else (step.args[0] if step.args else None)
        if source_arg is None or source_arg.kind != "tensor" or source_arg.ref not in inputs:
            return False
        source = args[1] if into else args[0]
        target = args[0] if into else result
        if not isinstance(target, torch.Tensor) or not isinstance(source, torch.Tensor):
            return False
        if target.dtype != source.dtype or target.shape != source.shape:
            return False
        whole = target.storage_offset() == 0 and target.numel() * target.element_size() == target.untyped_storage().nbytes()
        return whole and is_dense(target)

    def outputs(self) -> list[torch.Tensor]:
        returned = self.tape.outputs
        if returned is None:
            raise ReplayError("the call returned something other than tensors")
        if returned.kind == "tensor":
            return [self.decode(returned)]
        if returned.kind in ("list", "tuple"):
            items = [self.decode(item) for item in returned.items or []]
            if all(isinstance(item, torch.Tensor) for item in items):
                return items
        raise ReplayError("the call returned something other than tensors")

    def mutated(self) -> list[str]:
        """Inputs whose buffer no longer holds the fresh input."""
        changed = []
        for buffer in self.tape.buffers:
            if buffer.origin == "input" and buffer.view is not None and buffer.param is not None:
                if not same_bits(self.view(buffer.view), self.inputs[buffer.param]):
                    changed.append(buffer.param)
        return changed


def _allowed_host_reads(tape: CallTape) -> set[int]:
    """The steps of `tape` that are host reads the policy allows: `aten::_local_scalar_dense` of an integer
    or boolean tensor whose buffer an earlier launch was given, the first MAX_HOST_READS of them
    (derived from the steps, never from the tape's labels)."""
    launched: set[int] = set()
    allowed: set[int] = set()
    for index, step in enumerate(tape.steps):
        if isinstance(step, LaunchStep):
            launched |= launch_buffers(step)
            continue
        if step.op.partition(".")[0] != "aten::" + HOST_READ_PACKET.partition(".")[2] or not step.args:
            continue
        ref = step.args[0].ref
        if step.args[0].kind != "tensor" or ref is None or ref.buffer not in launched:
            continue
        if dtype_from_name(ref.dtype).is_floating_point or dtype_from_name(ref.dtype).is_complex:
            continue
        if len(allowed) < MAX_HOST_READS:
            allowed.add(index)
    return allowed


def _allocates(step: OpStep | LaunchStep) -> bool:
    """Whether a step's overload is an allocation (never trusting its recorded labels)."""
    if not isinstance(step, OpStep):
        return False
    try:
        return packet_of(_overload(step.op)) in ALLOCATIONS
    except ReplayError:
        return False


def _written(func: Any, args: list[Any], result: Any) -> list[torch.Tensor]:
    """The tensors an op wrote: its arguments its schema marks as written, and what it returned."""
    written = [
        arg
        for arg, schema in zip(args, func._schema.arguments)
        if isinstance(arg, torch.Tensor) and schema.alias_info is not None and schema.alias_info.is_write
    ]
    returned = result if isinstance(result, (tuple, list)) else [result]
    return written + [item for item in returned if isinstance(item, torch.Tensor) and all(item is not arg for arg in written)]


def _overload(name: str) -> Any:
    """The aten overload "aten::op.overload" names (only aten: a tape cannot name a custom op)."""
    namespace, _, rest = name.partition("::")
    if namespace != "aten" or not rest:
        raise ReplayError(f"the tape names {name!r}: only aten ops are replayed")
    op, _, overload = rest.partition(".")
    packet = getattr(torch.ops.aten, op, None)
    if packet is None:
        raise ReplayError(f"no aten op {op!r}")
    found = getattr(packet, overload or "default", None)
    if found is None:
        raise ReplayError(f"no overload {name!r}")
    return found
