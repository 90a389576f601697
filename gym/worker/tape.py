"""A call's tape: the torch ops and Triton launches it ran, over the buffers they touched.

The submission's process records one tape per call (`TapeRecorder`, fed by the op
trace and the launch hook while the call runs). A tape is a claim, not evidence:
the submission can forge it. The witness (`gym.worker.witness`), a clean process
that never ran submission code, replays the tape of a call the grader picks on
fresh inputs the submission never saw, loading only the file's `@triton.jit`
functions; only what the replay produces counts. A forged tape can only make the
replay fail.

Buffers are storages. A tensor is a view of one: (buffer, storage offset, shape,
strides, dtype), so views, reshapes and reinterpreting casts need no replay. A
buffer is the call's input (a parameter, or a ModelNew state name), created by one
of the tape's steps (an allocation, or an op's new output), or external: it
existed before the call (a module-level workspace, a previous call's result) and
the witness gives it a buffer of random bytes of the same size, so a kernel may use it
as scratch but never carry a result in it. One exception: a buffer that held one value
repeated when the call first used it (a zeroed semaphore or counter that the kernels
reset after use) is replayed holding that value (`Buffer.start`, at most 8 bytes): a
value repeated can carry no answer to inputs made after the submission's process is
gone, and a false claim only makes the replay differ from the call.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from typing import Any, Literal

import torch
from pydantic import Field

from .dtypes import dtype_name
from .protocol import WireModel
from .torch_policy import HOST_READ_PACKET, MAX_HOST_READS

# Captured at import, before the worker installs its tripwires on Tensor methods (the host
# bridge tripwire refuses `untyped_storage` to the submission, not to the recorder).
_untyped_storage: Callable[[torch.Tensor], torch.UntypedStorage] = torch.Tensor.untyped_storage
_storage_offset: Callable[[torch.Tensor], Any] = torch.Tensor.storage_offset
_stride: Callable[[torch.Tensor], tuple[int, ...]] = torch.Tensor.stride
# The recorder's own reads run outside the op trace (the worker's tripwire wraps the name later).
_DisableTorchDispatch: Any = torch._C._DisableTorchDispatch

# Caps on what one tape may hold; a call past them gets a truncated tape, which cannot be replayed.
MAX_STEPS = 20_000
MAX_BUFFERS = 4_096
MAX_VALUE_ITEMS = 4_096
MAX_VALUE_DEPTH = 6

ValueKind = Literal[
    "tensor",
    "int",
    "float",
    "bool",
    "str",
    "none",
    "list",
    "tuple",
    "torch_dtype",
    "tl_dtype",
    "device",
    "layout",
    "memory_format",
    "constexpr",
    "descriptor",
]


class TensorRef(WireModel):
    buffer: int = Field(ge=0, description="The buffer (storage) the tensor views.")
    offset: int = Field(ge=0, description="Storage offset, in elements of `dtype`.")
    shape: list[int] = Field(max_length=16, description="Size of each dimension.")
    strides: list[int] = Field(max_length=16, description="Stride of each dimension, in elements.")
    dtype: str = Field(description='Short dtype name, e.g. "float32".')


class Value(WireModel):
    """One argument (or part of one) of an op or a launch."""

    kind: ValueKind = Field(description="What the value is; the other fields hold it.")
    ref: TensorRef | None = Field(default=None, description="kind tensor: the view.")
    integer: int | None = Field(default=None, description="kind int.")
    real: float | None = Field(default=None, description="kind float (NaN and infinities as strings).")
    boolean: bool | None = Field(default=None, description="kind bool.")
    text: str | None = Field(
        default=None,
        max_length=200,
        description="kind str, and the name of a torch_dtype, tl_dtype, device type, layout or memory_format.",
    )
    items: list[Value] | None = Field(default=None, max_length=MAX_VALUE_ITEMS, description="kind list, tuple and constexpr (one item).")
    descriptor: list[list[int]] | None = Field(
        default=None,
        max_length=3,
        description="kind descriptor (a host TensorDescriptor over `ref`): its shape, strides and block shape.",
    )


class Buffer(WireModel):
    id: int = Field(ge=0, description="The buffer's number, as TensorRef.buffer names it.")
    origin: Literal["input", "step", "external"] = Field(
        description="input: the call's argument `param`; step: made by step `step`; external: existed before the call (replayed as random bytes)."
    )
    nbytes: int = Field(ge=0, description="Size of the storage in bytes.")
    param: str | None = Field(default=None, max_length=200, description="origin input: the parameter (or ModelNew state name) it holds.")
    step: int | None = Field(default=None, ge=0, description="origin step: the step whose output it is.")
    view: TensorRef | None = Field(default=None, description="origin input: the input tensor as the call was given it (a view of this buffer).")
    start: str | None = Field(
        default=None,
        max_length=16,
        pattern="^([0-9a-f]{2}|[0-9a-f]{4}|[0-9a-f]{8}|[0-9a-f]{16})$",
        description=(
            "origin external: when every element held one value at the call's first use of the buffer, that value's "
            "bytes in hex (a period of 1, 2, 4 or 8 bytes the buffer's size is a multiple of), and the witness fills "
            "the buffer with it; None: random bytes."
        ),
    )


class OpStep(WireModel):
    kind: Literal["op"] = "op"
    op: str = Field(max_length=200, description='The aten overload, e.g. "aten::empty.memory_format".')
    packet: str = Field(max_length=200, description='The op as the op trace names it, e.g. "aten.empty" (what the torch policy judges).')
    effect: bool = Field(description="True when it allocates or writes (replayed); False for views and metadata (nothing to replay).")
    args: list[Value] = Field(max_length=64, description="Positional arguments.")
    kwargs: dict[str, Value] = Field(description="Keyword arguments.")
    creates: list[int | None] = Field(
        max_length=64, description="For each tensor the op returned (flattened): the buffer it created, or None when it aliases one."
    )
    read: Value | None = Field(
        default=None,
        description=(
            "A host read (aten::_local_scalar_dense): the value the call read. The witness reads its own buffer and "
            "replays only when it reads the same (later steps carry what the call did with the value)."
        ),
    )


class LaunchStep(WireModel):
    kind: Literal["launch"] = "launch"
    kernel: str = Field(max_length=200, description="The jit function's qualified name in the submission file.")
    code: str | None = Field(
        default=None,
        max_length=64,
        description="The identity of the launched function's code (`code_identity`); the witness replays only the file's function with that name and code.",
    )
    grid: list[int] = Field(min_length=1, max_length=3, description="The launch grid, resolved.")
    args: list[Value] = Field(max_length=256, description="Positional arguments as passed to the launch.")
    kwargs: dict[str, Value] = Field(description="Keyword arguments (constexprs, launch options such as num_warps).")


class CallTape(WireModel):
    call: int = Field(ge=0, description="The call this tape records.")
    buffers: list[Buffer] = Field(max_length=MAX_BUFFERS, description="Every storage the call's ops and launches touched.")
    steps: list[OpStep | LaunchStep] = Field(max_length=MAX_STEPS, description="Ops and launches in the order they ran.")
    outputs: Value | None = Field(default=None, description="What the call returned (a tensor, or a list/tuple of them).")
    truncated: str | None = Field(default=None, max_length=2000, description="Why the recording stopped short (then it cannot be replayed).")


def launch_buffers(step: LaunchStep) -> set[int]:
    """The buffers a launch was given (tensor and descriptor arguments, at any depth)."""
    found: set[int] = set()

    def collect(value: Value) -> None:
        if value.ref is not None:
            found.add(value.ref.buffer)
        for item in value.items or []:
            collect(item)

    for value in [*step.args, *step.kwargs.values()]:
        collect(value)
    return found


def tape_file(call_id: int) -> str:
    """The tape of call `call_id` in the output folder."""
    return f"call{call_id}.tape.json"


class Unrecordable(Exception):
    """A value the tape cannot describe (its type is named)."""


def _triton_types() -> tuple[type[Any], type[Any], type[Any] | None]:
    import triton.language as tl

    try:
        from triton.tools.tensor_descriptor import TensorDescriptor

        descriptor: type[Any] | None = TensorDescriptor
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        descriptor = None
    return tl.dtype, tl.constexpr, descriptor


_SKIP = threading.local()


class skipping:
    """Context manager: what runs inside is left out of the tape (Triton's autotuner benchmarking configs)."""

    def __enter__(self) -> None:
        _SKIP.depth = getattr(_SKIP, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _SKIP.depth -= 1


def skipped() -> bool:
    return bool(getattr(_SKIP, "depth", 0))


_EFFECT: dict[Any, bool] = {}
# Periods (bytes) a buffer's repeated value may have (`Buffer.start`).
START_PERIODS = (1, 2, 4, 8)


def repeated_value(storage: torch.UntypedStorage) -> str | None:
    """The hex bytes of the value `storage` holds repeated (the shortest period of 1, 2, 4 or 8 bytes
    that its size is a multiple of), or None. Runs outside the op trace (no dispatch mode sees it)."""
    size = int(storage.nbytes())
    if not size:
        return None
    try:
        with _DisableTorchDispatch(), torch.no_grad():
            flat = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage, 0, (size,), (1,))
            for period in START_PERIODS:
                if size % period:
                    return None
                rows = flat.view(size // period, period)
                first = rows[0]
                if bool(torch.equal(rows[-1], first)) and bool(rows.eq(first).all()):
                    return bytes(int(byte) for byte in first.cpu()).hex()
    except Exception:  # noqa: BLE001 - a storage that cannot be read (or a patched torch): random bytes
        return None
    return None


def packet_of(func: Any) -> str:
    """The packet an aten overload belongs to, as the op trace and the torch policy name it ("aten.add")."""
    return f"{func.namespace}.{func._opname}"


def _code_parts(code: Any, depth: int = 0) -> Any:
    if depth > 8:
        return "..."
    consts = tuple(_code_parts(const, depth + 1) if hasattr(const, "co_code") else repr(const) for const in code.co_consts)
    return (code.co_qualname, code.co_argcount, code.co_kwonlyargcount, code.co_code.hex(), consts, code.co_names, code.co_varnames)


def _described(value: Any, depth: int = 0) -> str:
    if isinstance(value, torch.Tensor):
        return f"T{list(value.shape)}:{dtype_name(value.dtype)}"
    if isinstance(value, (list, tuple)) and depth < 4:
        inner = ", ".join(_described(item, depth + 1) for item in value[:64])
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, (bool, int, str)) or value is None:
        return repr(value)
    if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
        return str(value)
    return type(value).__name__


def call_signature(func: Any, args: Iterable[Any], kwargs: dict[str, Any]) -> str:
    """One aten call as the anchor check compares it: the overload, every non-tensor argument's value
    and every tensor argument's shape and dtype, in order ("aten::addmm(T[4, 8]:float32, ..., beta=1)")."""
    described = [_described(arg) for arg in args] + [f"{name}={_described(value)}" for name, value in sorted(kwargs.items()) if name != "out"]
    return f"{func.name()}({', '.join(described)})"[:2000]


_CODE_IDS: dict[Any, str] = {}


def code_identity(function: Any) -> str:
    """sha256 (hex, 64 characters) of a Python function's code: its bytecode, constants (nested code
    included), names and arguments, not its file or lines (the kernels file drops decorators such as
    `autotune`), so the file's function and the submission's have the same identity."""
    code = getattr(function, "__code__", None)
    if code is None:
        return "no-code"
    known = _CODE_IDS.get(code)
    if known is None:
        known = _CODE_IDS[code] = hashlib.sha256(repr(_code_parts(code)).encode()).hexdigest()
    return known


def has_effect(func: Any) -> bool:
    """Whether an aten overload allocates or writes (by its schema): views and metadata do neither."""
    known = _EFFECT.get(func)
    if known is None:
        schema = func._schema
        writes = any(arg.alias_info is not None and arg.alias_info.is_write for arg in schema.arguments)
        tensor_returns = [ret for ret in schema.returns if "Tensor" in str(ret.type)]
        aliasing = bool(tensor_returns) and all(ret.alias_info is not None and not ret.alias_info.is_write for ret in tensor_returns)
        known = _EFFECT[func] = writes or (bool(tensor_returns) and not aliasing)
    return known


class TapeRecorder:
    """Records one call (thread-safe: submission threads record into it too)."""

    def __init__(self, call_id: int) -> None:
        self.call_id = call_id
        self.buffers: list[Buffer] = []
        self.steps: list[OpStep | LaunchStep] = []
        self.truncated: str | None = None
        self._ids: dict[tuple[str, int, int], int] = {}
        # Buffers a launch of this call was given (a host read of one may be a count a kernel wrote).
        self._launched: set[int] = set()
        self.host_reads = 0
        # Every storage seen stays alive until the tape is done, so no address is reused within the call.
        self._alive: list[Any] = []
        self._lock = threading.Lock()
        self._tl_dtype: type[Any]
        self._constexpr: type[Any]
        self._descriptor: type[Any] | None
        self._tl_dtype, self._constexpr, self._descriptor = _triton_types()

    # -- buffers --------------------------------------------------------------------------

    def _key(self, storage: torch.UntypedStorage) -> tuple[str, int, int]:
        pointer = int(storage.data_ptr())
        # Empty storages may share address 0: each is its own buffer.
        return (storage.device.type, pointer, 0 if pointer else id(storage))

    def add_input(self, param: str, tensor: torch.Tensor) -> None:
        """Declare `tensor`'s storage as the call's input `param` (before the call)."""
        storage = _untyped_storage(tensor)
        key = self._key(storage)
        if key in self._ids:
            return
        buffer = len(self.buffers)
        view = TensorRef(
            buffer=buffer, offset=int(_storage_offset(tensor)), shape=list(tensor.shape), strides=list(_stride(tensor)), dtype=dtype_name(tensor.dtype)
        )
        self._new(key, storage, Buffer(id=buffer, origin="input", nbytes=int(storage.nbytes()), param=param, view=view))

    def _new(self, key: tuple[str, int, int], storage: Any, buffer: Buffer) -> int:
        if len(self.buffers) >= MAX_BUFFERS:
            raise Unrecordable(f"more than {MAX_BUFFERS} buffers")
        self._ids[key] = buffer.id
        self.buffers.append(buffer)
        self._alive.append(storage)
        return buffer.id

    def _buffer_of(self, tensor: torch.Tensor, created_by: int | None = None) -> tuple[int, bool]:
        """(the buffer of `tensor`'s storage, whether it is new); unknown storages are external,
        or created by step `created_by` when given."""
        storage = _untyped_storage(tensor)
        key = self._key(storage)
        known = self._ids.get(key)
        if known is not None:
            return known, False
        if created_by is not None:
            buffer = Buffer(id=len(self.buffers), origin="step", nbytes=int(storage.nbytes()), step=created_by)
        else:
            buffer = Buffer(id=len(self.buffers), origin="external", nbytes=int(storage.nbytes()), start=repeated_value(storage))
        return self._new(key, storage, buffer), True

    def see(self, args: Iterable[Any], kwargs: dict[str, Any]) -> None:
        """An op is about to run on these arguments: the storages it finds that the call has not
        touched yet are external, registered now, before the op can write them (`Buffer.start`)."""

        def walk(value: Any, depth: int) -> None:
            if isinstance(value, torch.Tensor):
                self._buffer_of(value)
            elif isinstance(value, (list, tuple)) and depth < MAX_VALUE_DEPTH:
                for item in value[:MAX_VALUE_ITEMS]:
                    walk(item, depth + 1)

        with self._lock:
            if self.truncated is not None:
                return
            try:
                walk(list(args), 0)
                walk(list(kwargs.values()), 0)
            except Unrecordable as error:
                self.truncated = str(error)

    def _ref(self, tensor: torch.Tensor) -> TensorRef:
        buffer, _ = self._buffer_of(tensor)
        return TensorRef(
            buffer=buffer, offset=int(_storage_offset(tensor)), shape=list(tensor.shape), strides=list(_stride(tensor)), dtype=dtype_name(tensor.dtype)
        )

    # -- values ---------------------------------------------------------------------------

    def encode(self, value: Any, depth: int = 0) -> Value:
        if depth > MAX_VALUE_DEPTH:
            raise Unrecordable("a value nested too deeply")
        if isinstance(value, torch.Tensor):
            return Value(kind="tensor", ref=self._ref(value))
        if isinstance(value, bool):
            return Value(kind="bool", boolean=value)
        if isinstance(value, int):
            return Value(kind="int", integer=int(value))
        if isinstance(value, float):
            return Value(kind="float", real=float(value))
        if isinstance(value, str):
            return Value(kind="str", text=value[:200])
        if value is None:
            return Value(kind="none")
        if isinstance(value, (list, tuple)):
            if len(value) > MAX_VALUE_ITEMS:
                raise Unrecordable(f"a sequence of {len(value)} items")
            return Value(kind="list" if isinstance(value, list) else "tuple", items=[self.encode(item, depth + 1) for item in value])
        if isinstance(value, torch.dtype):
            return Value(kind="torch_dtype", text=dtype_name(value))
        if isinstance(value, torch.device):
            return Value(kind="device", text=value.type)
        if isinstance(value, torch.layout):
            return Value(kind="layout", text=str(value).removeprefix("torch."))
        if isinstance(value, torch.memory_format):
            return Value(kind="memory_format", text=str(value).removeprefix("torch."))
        if isinstance(value, self._tl_dtype):
            return Value(kind="tl_dtype", text=str(value))
        if isinstance(value, self._constexpr):
            held: Any = value
            return Value(kind="constexpr", items=[self.encode(held.value, depth + 1)])
        if self._descriptor is not None and isinstance(value, self._descriptor):
            descriptor: Any = value
            return Value(
                kind="descriptor",
                ref=self._ref(descriptor.base),
                descriptor=[[int(x) for x in descriptor.shape], [int(x) for x in descriptor.strides], [int(x) for x in descriptor.block_shape]],
            )
        if hasattr(value, "__index__") and not hasattr(value, "data_ptr"):
            return Value(kind="int", integer=int(value.__index__()))
        raise Unrecordable(f"a value of type {type(value).__module__}.{type(value).__qualname__}")

    # -- steps ----------------------------------------------------------------------------

    def _append(self, make: Callable[[], OpStep | LaunchStep]) -> None:
        with self._lock:
            if self.truncated is not None:
                return
            if len(self.steps) >= MAX_STEPS:
                self.truncated = f"more than {MAX_STEPS} ops and launches in one call"
                return
            try:
                self.steps.append(make())
            except Unrecordable as error:
                self.truncated = str(error)

    def op(self, func: Any, args: Iterable[Any], kwargs: dict[str, Any], result: Any) -> None:
        """An aten op the call dispatched (outside any launch), after it ran."""

        def make() -> OpStep:
            index = len(self.steps)
            encoded_args = [self.encode(arg) for arg in args]
            encoded_kwargs = {str(name): self.encode(value) for name, value in kwargs.items()}
            outputs = result if isinstance(result, (tuple, list)) else [result]
            creates: list[int | None] = []
            for item in outputs:
                if isinstance(item, torch.Tensor):
                    buffer, new = self._buffer_of(item, created_by=index)
                    creates.append(buffer if new else None)
            read = self.encode(result) if packet_of(func) == HOST_READ_PACKET and isinstance(result, (bool, int, float)) else None
            return OpStep(
                op=str(func.name()),
                packet=packet_of(func),
                effect=has_effect(func),
                args=encoded_args,
                kwargs=encoded_kwargs,
                creates=creates[:64],
                read=read,
            )

        self._append(make)

    def launch(self, kernel: str, grid: Any, args: Iterable[Any], kwargs: dict[str, Any], code: str | None = None) -> None:
        """A Triton launch the call made, before it ran (`grid` resolved); `code`: the function's `code_identity`."""

        def make() -> LaunchStep:
            try:
                resolved = [int(size) for size in grid]
            except TypeError:
                raise Unrecordable("a grid that is not a sequence of ints") from None
            step = LaunchStep(
                kernel=kernel[:200],
                code=code,
                grid=resolved or [1],
                args=[self.encode(arg) for arg in args],
                kwargs={str(name): self.encode(value) for name, value in kwargs.items()},
            )
            self._launched.update(launch_buffers(step))
            return step

        self._append(make)

    def host_read_allowed(self, tensor: torch.Tensor, count: int = 1) -> bool:
        """Whether `count` values of `tensor` read on the host are a host read the policy allows
        (`torch_policy.HOST_READ_OP`): an integer or boolean tensor whose buffer a launch of this call
        was given, within the call's MAX_HOST_READS; counted when allowed."""
        if tensor.is_floating_point() or tensor.is_complex():
            return False
        with self._lock:
            known = self._ids.get(self._key(_untyped_storage(tensor)))
            if known is None or known not in self._launched or self.host_reads + count > MAX_HOST_READS:
                return False
            self.host_reads += count
            return True

    def finish(self, result: Any) -> CallTape:
        """The tape, with what the call returned (exact tensors, tuples and lists only)."""
        outputs: Value | None = None
        with self._lock:
            try:
                if type(result) is torch.Tensor:
                    outputs = self.encode(result)
                elif type(result) in (tuple, list) and all(type(item) is torch.Tensor for item in result):
                    outputs = Value(kind="list" if type(result) is list else "tuple", items=[self.encode(item) for item in result])
            except Unrecordable as error:
                self.truncated = self.truncated or str(error)
            tape = CallTape(call=self.call_id, buffers=list(self.buffers), steps=list(self.steps), outputs=outputs, truncated=self.truncated)
            self._alive.clear()
        return tape


# The recorder of the call in progress (one slot; None between calls and in the witness).
_CURRENT: list[TapeRecorder | None] = [None]


def current() -> TapeRecorder | None:
    return _CURRENT[0] if not skipped() else None


def begin(recorder: TapeRecorder) -> None:
    _CURRENT[0] = recorder


def end() -> None:
    _CURRENT[0] = None
