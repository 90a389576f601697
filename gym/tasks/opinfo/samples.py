"""PyTorch's OpInfo database as kernel tasks: which ops qualify, and the one sample each becomes.

`torch.testing._internal.common_methods_invocations.op_db` (in every torch wheel; it
imports `expecttest`, hence the `opinfo` extra) lists every op PyTorch's own tests
describe, each with a sample-input generator. For each op that supports float32 on
the CPU, every sample is tried and one is kept (`choose_sample`): a call that
dispatches exactly one aten compute op (the op trace's plumbing, i.e. views,
allocations and copies, aside), takes dense real tensors and literal arguments,
returns a tensor (or a tuple of them) that is not a view of its inputs, and gives the
same answer under two random seeds. The largest such sample of the highest rank wins
(it says most about the op's layout). An op with no such sample is left out with the
reason of its most telling refusal (`Excluded`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from gym.errors import KernelGymError
from gym.tasks.metadata import output_kind, selects
from gym.worker.torch_policy import PLUMBING_OPS

# Linear-algebra decompositions whose outputs are unique only up to signs, phases or order
# (eigenvectors, singular vectors, Q of QR, LU pivots): no contract can compare them as produced.
NOT_UNIQUE = frozenset(
    {
        "linalg.eig",
        "linalg.eigh",
        "linalg.svd",
        "svd",
        "linalg.qr",
        "qr",
        "linalg.lu",
        "linalg.lu_factor",
        "linalg.lu_factor_ex",
        "lu",
        "lu_unpack",
        "linalg.ldl_factor",
        "linalg.ldl_factor_ex",
        "svd_lowrank",
        "pca_lowrank",
        "linalg.eigvals",
        "linalg.eigvalsh",
        "geqrf",
        "linalg.householder_product",
        "ormqr",
        "linalg.matrix_rank",
        "linalg.pinv",
        "pinverse",
        "linalg.lstsq",
    }
)
# A list argument of more tensors than this (cat of 20 tensors) is not a kernel signature.
MAX_LIST_TENSORS = 6
# aten ops that draw random numbers: their tasks could never be compared.
RANDOM_OPS = frozenset(
    f"aten.{name}"
    for name in (
        "bernoulli",
        "multinomial",
        "normal",
        "uniform",
        "rand",
        "rand_like",
        "randn",
        "randn_like",
        "randint",
        "randint_like",
        "randperm",
        "poisson",
        "exponential",
        "cauchy",
        "geometric",
        "log_normal",
        "native_dropout",
        "random",
        "_fused_dropout",
        "rrelu_with_noise",
        "_standard_gamma",
        "binomial",
        "_sample_dirichlet",
    )
)
# Samples tried per op (OpInfo lists up to a few hundred for some ops; the best comes early).
MAX_SAMPLES = 64
# A sample tensor larger than this many elements is not needed to learn the op's layout.
MAX_SAMPLE_ELEMENTS = 1 << 16


@dataclass(frozen=True)
class OpEntry:
    """One OpInfo entry (an op, or one variant of it)."""

    name: str
    variant: str
    info: Any

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name


@dataclass
class TensorInput:
    """A tensor the op is called with: where it goes in the call, and how to draw it again."""

    # The forward parameter it becomes.
    param: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    # Value range seen in the sample (floats and ints), or the fraction of True (bools).
    low: float
    high: float
    # An index below a dimension of the problem (high + 1 is that dimension): drawn below its size
    # constant, so it stays in range when the shapes are scaled.
    bounded: bool = False
    # A draw that keeps the op's preconditions (gym.tasks.opinfo.preconditions), as a template the
    # problem fills in: {draw} is the default draw, {shape} this tensor's shape, {dim<i>} its size i,
    # {shape:<param>} another tensor's shape; other tensors appear by parameter name, drawn first
    # (`after`). Empty: the default draw.
    draw: str = ""
    after: tuple[str, ...] = ()


@dataclass
class SampleCase:
    """One sample, ready to be written as a problem: `call` with `tensors` in its argument slots."""

    entry: OpEntry
    index: int
    # The Python expression the op is called by ("torch.nn.functional.gelu"), or an aten overload.
    callee: str
    # Positional and keyword arguments: a TensorInput stands for a forward parameter; anything else is a literal.
    args: list[Any]
    kwargs: dict[str, Any]
    tensors: list[TensorInput]
    # The aten compute op the call dispatches ("aten.gelu"), and every op it ran.
    compute_op: str
    ops: dict[str, int]
    output_kind: str
    # Whether every output value is one of the inputs' (a selection or permutation: compared bitwise).
    selected: bool
    # Largest input element count vs output element count, and whether FLOPs were counted (matmul, conv).
    reduces: bool
    flops: int = 0
    docstring: str = ""
    notes: list[str] = field(default_factory=list)
    # Where the call comes from, for the problem's header (empty: an OpInfo sample, named by entry and index).
    origin: str = ""
    # What the op's preconditions made of the draws (gym.tasks.opinfo.preconditions): lines get_inputs
    # starts with (templates, as TensorInput.draw), the helper functions the draws call, and one note
    # per tensor drawn to a precondition ("sorter: the permutation that sorts x (its argsort)").
    prelude: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    preconditions: list[str] = field(default_factory=list)

    def score(self) -> tuple[int, int]:
        return (min(2, max((len(t.shape) for t in self.tensors), default=0)), sum(math.prod(t.shape) for t in self.tensors))


@dataclass(frozen=True)
class Excluded:
    """An op left out, and why (one of the REASONS keys, then a detail)."""

    entry: OpEntry
    reason: str
    detail: str


# Why an op can be left out, most telling first (an op's reason is its most telling refusal).
REASONS: dict[str, str] = {
    "not_unique": "a decomposition whose outputs are unique only up to signs, phases or order",
    "no_float32": "does not support float32 on the CPU",
    "factory": "a factory op: no tensor input",
    "random": "random: two seeds give different outputs",
    "in_place": "an in-place variant: it writes its input",
    "view": "a pure view, copy, allocation or metadata op: no aten compute op runs",
    "not_a_tensor": "the output is not a tensor or a tuple of tensors",
    "layout": "a sparse, complex, quantized or nested input or output",
    "tensor_list": "a list of tensors as input or argument (cat, stack, ...)",
    "argument": "an argument that cannot be written as a literal",
    "many_ops": "dispatches more than one aten compute op (a composite: a fusion, not one op)",
    "non_finite": "non-finite sample values",
    "empty": "an input with a zero-size dimension (nothing computed along it), or only empty outputs",
    "sample_error": "its sample generator or the op itself fails on the CPU",
    "uninformative": "its outputs do not depend on its inputs (the same for two seeds, or a copy) however its float inputs are drawn",
}
_ORDER = list(REASONS)


def load_op_db() -> list[OpEntry]:
    """Every OpInfo entry of this torch (ImportError when `expecttest` is missing)."""
    from torch.testing._internal.common_methods_invocations import op_db

    entries: list[OpEntry] = []
    seen: dict[tuple[str, str], int] = {}
    for info in op_db:
        key = (info.name, info.variant_test_name or "")
        seen[key] = seen.get(key, 0) + 1
        # op_db lists a few ops twice (rsub, t): the later entries are told apart by their number.
        variant = key[1] if seen[key] == 1 else "_".join(filter(None, [key[1], f"entry{seen[key]}"]))
        entries.append(OpEntry(name=info.name, variant=variant, info=info))
    return entries


class _ComputeRecorder(TorchDispatchMode):
    """Records every aten op (packet names) and the arguments of the compute ones."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.compute: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = f"aten.{func.overloadpacket.__name__}"
        self.ops[name] += 1
        if name not in PLUMBING_OPS:
            self.compute.append((str(func), args, kwargs or {}))
        return func(*args, **(kwargs or {}))


def python_callee(entry: OpEntry) -> str | None:
    """`torch.<name>` when that is the op OpInfo calls (variants often call a lambda instead)."""
    target: Any = torch
    for part in entry.name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return f"torch.{entry.name}" if target is entry.info.op else None


def literal_ok(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, str, torch.dtype, torch.memory_format, torch.layout)):
        return True
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple, torch.Size)):
        return all(literal_ok(item) for item in value)
    return False


class _Refused(KernelGymError):
    """A sample that cannot be a kernel task, with its reason (reported, never raised out)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor in a nest of lists, tuples and dicts, in order."""
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _check_layout(tensor: torch.Tensor, what: str) -> None:
    if tensor.layout != torch.strided or tensor.is_complex() or tensor.is_quantized or tensor.is_nested:
        raise _Refused("layout", f"{what} is {tensor.layout}, {tensor.dtype}")


def _describe(tensor: torch.Tensor, param: str) -> TensorInput:
    _check_layout(tensor, param)
    if tensor.numel() > MAX_SAMPLE_ELEMENTS:
        raise _Refused("argument", f"{param} has {tensor.numel()} elements (larger than a sample needs)")
    if tensor.dtype == torch.bool:
        fraction = float(tensor.float().mean()) if tensor.numel() else 0.5
        return TensorInput(param=param, shape=tuple(tensor.shape), dtype=tensor.dtype, low=fraction, high=fraction)
    if tensor.dtype.is_floating_point and tensor.numel() and not bool(torch.isfinite(tensor).all()):
        raise _Refused("non_finite", f"{param} holds inf or NaN")
    low = float(tensor.min()) if tensor.numel() else 0.0
    high = float(tensor.max()) if tensor.numel() else 1.0
    return TensorInput(param=param, shape=tuple(tensor.shape), dtype=tensor.dtype, low=low, high=high)


_POSITIONAL_NAMES = ("x", "y", "z", "w", "u", "v")


def _slot(value: Any, param: str, tensors: list[TensorInput], seen: dict[int, TensorInput]) -> Any:
    """An argument as written in the problem: a TensorInput for a tensor, the value for a literal."""
    if isinstance(value, torch.Tensor):
        known = seen.get(id(value))
        if known is not None:
            return known
        described = _describe(value, param)
        tensors.append(described)
        seen[id(value)] = described
        return described
    if isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
        # A list of tensors (cat, stack): one forward parameter per tensor, passed as the same kind of sequence.
        if not all(isinstance(item, torch.Tensor) for item in value) or len(value) > MAX_LIST_TENSORS:
            raise _Refused("tensor_list", f"{param} is a {type(value).__name__} of {len(value)} tensors and other things")
        items = [_slot(item, f"{param}{i}", tensors, seen) for i, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if not literal_ok(value):
        raise _Refused("argument", f"{param} is a {type(value).__name__}")
    return value


def _outputs(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)) and value and all(isinstance(item, torch.Tensor) for item in value):
        return list(value)
    raise _Refused("not_a_tensor", f"returns {type(value).__name__}")


def _aliases(output: torch.Tensor, inputs: list[torch.Tensor]) -> bool:
    if output.numel() == 0:
        return False
    storage = output.untyped_storage().data_ptr()
    return any(tensor.numel() and tensor.untyped_storage().data_ptr() == storage for tensor in inputs)


def _same(first: list[torch.Tensor], second: list[torch.Tensor]) -> bool:
    return len(first) == len(second) and all(a.shape == b.shape and torch.equal(a.nan_to_num(), b.nan_to_num()) for a, b in zip(first, second))


def _run(entry: OpEntry, sample: Any, seed: int) -> tuple[Any, _ComputeRecorder, int]:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        recorder = _ComputeRecorder()
        with torch.no_grad(), FlopCounterMode(display=False) as counter, recorder:
            result = entry.info.op(sample.input, *sample.args, **sample.kwargs)
    return result, recorder, int(counter.get_total_flops())


def _case(entry: OpEntry, index: int, sample: Any) -> SampleCase:
    if isinstance(sample.input, (list, tuple)) and not (sample.input and all(isinstance(item, torch.Tensor) for item in sample.input)):
        raise _Refused("tensor_list", "the input is a list of other things than tensors")
    if not isinstance(sample.input, (torch.Tensor, list, tuple)):
        raise _Refused("factory", f"the input is a {type(sample.input).__name__}")
    tensors: list[TensorInput] = []
    seen: dict[int, TensorInput] = {}
    first = _slot(sample.input, "x", tensors, seen)
    args = [first] + [
        _slot(value, _POSITIONAL_NAMES[i + 1] if i + 1 < len(_POSITIONAL_NAMES) else f"arg{i}", tensors, seen) for i, value in enumerate(sample.args)
    ]
    kwargs = {key: _slot(value, key, tensors, seen) for key, value in sample.kwargs.items()}
    inputs = _tensors([sample.input, sample.args, sample.kwargs])
    if all(t.numel() == 0 for t in inputs):
        raise _Refused("empty", "every input is empty")
    empty = [t.param for t in tensors if 0 in t.shape]
    if empty:
        # A zero-size dimension (addmm's inner size of 0): the op computes nothing along it, at every shape.
        raise _Refused("empty", f"{', '.join(empty)} {'has' if len(empty) == 1 else 'have'} a zero-size dimension")
    before = [t.clone() for t in inputs]
    result, recorder, flops = _run(entry, sample, 0)
    outputs = _outputs(result)
    for tensor in outputs:
        _check_layout(tensor, "the output")
    if any(not torch.equal(a.nan_to_num(), b.nan_to_num()) for a, b in zip(before, inputs)):
        raise _Refused("in_place", "the call writes an input")
    compute = sorted({name for name in recorder.ops if name not in PLUMBING_OPS})
    if not compute:
        raise _Refused("view", f"runs only {', '.join(sorted(recorder.ops)) or 'no aten op'}")
    if any(_aliases(t, inputs) for t in outputs):
        raise _Refused("view", "the output is a view of an input")
    if set(compute) & RANDOM_OPS:
        raise _Refused("random", f"dispatches {', '.join(sorted(set(compute) & RANDOM_OPS))}")
    if len(compute) > 1:
        raise _Refused("many_ops", f"dispatches {', '.join(compute)}")
    if all(t.numel() == 0 for t in outputs):
        raise _Refused("empty", "the output is empty")
    again, _, _ = _run(entry, sample, 1)
    if not _same(outputs, _outputs(again)):
        raise _Refused("random", "the outputs differ between seeds 0 and 1")
    callee = python_callee(entry)
    if callee is None:
        # The aten overload itself, when its tensor arguments are the sample's own tensors.
        name, aten_args, aten_kwargs = recorder.compute[0]
        if len(recorder.compute) != 1 or sum(recorder.ops.values()) != 1:
            raise _Refused("argument", f"{entry.full_name} is called through a wrapper that does more than call {name}")
        tensors, seen = [], {}
        named = [_POSITIONAL_NAMES[i] if i < len(_POSITIONAL_NAMES) else f"arg{i}" for i in range(len(aten_args))]
        args = [_slot(value, param, tensors, seen) for value, param in zip(aten_args, named)]
        kwargs = {key: _slot(value, key, tensors, seen) for key, value in aten_kwargs.items()}
        known = {id(t) for t in inputs}
        if any(id(t) not in known for t in _tensors([aten_args, aten_kwargs])):
            raise _Refused("argument", f"{name} is called on tensors the wrapper made")
        callee = f"torch.ops.{name}"
    if any(0 in t.shape for t in tensors):
        raise _Refused("empty", f"{callee} takes a tensor with a zero-size dimension")
    largest = max((math.prod(t.shape) for t in tensors), default=0)
    case = SampleCase(
        entry=entry,
        index=index,
        callee=callee,
        args=args,
        kwargs=kwargs,
        tensors=tensors,
        compute_op=compute[0],
        ops=dict(recorder.ops),
        output_kind=output_kind(outputs),
        selected=selects(outputs, inputs),
        reduces=sum(t.numel() for t in outputs) < largest,
        flops=flops,
        docstring=summary(entry),
    )
    return case


def summary(entry: OpEntry) -> str:
    """The first paragraph of the op's docstring, on one line (empty when it has none)."""
    target: Any = torch
    for part in entry.name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return ""
    text = (getattr(target, "__doc__", None) or "").strip()
    lines: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)[:600]


def _samples(entry: OpEntry) -> Iterator[tuple[int, Any]]:
    for index, sample in enumerate(entry.info.sample_inputs("cpu", torch.float32, requires_grad=False)):
        if index >= MAX_SAMPLES:
            return
        yield index, sample


def choose_sample(entry: OpEntry, refine: Callable[[SampleCase], SampleCase] | None = None) -> SampleCase | Excluded:
    """The op's best qualifying sample, or why none qualifies (see the module docstring)."""
    found = qualifying_samples(entry, refine)
    return found if isinstance(found, Excluded) else found[0]


def qualifying_samples(entry: OpEntry, refine: Callable[[SampleCase], SampleCase] | None = None) -> list[SampleCase] | Excluded:
    """The op's qualifying samples, best first, or why none qualifies. `refine` (the importer passes
    gym.tasks.opinfo.preconditions.apply_preconditions) gives each case's draws the op's preconditions;
    it fails a sample as the sample's own failure would."""
    if entry.name in NOT_UNIQUE:
        return Excluded(entry, "not_unique", REASONS["not_unique"])
    if not entry.info.supports_dtype(torch.float32, "cpu"):
        return Excluded(entry, "no_float32", REASONS["no_float32"])
    if getattr(entry.info, "is_factory_function", False):
        return Excluded(entry, "factory", REASONS["factory"])
    cases: list[SampleCase] = []
    refusals: list[_Refused] = []
    try:
        for index, sample in _samples(entry):
            try:
                case = _case(entry, index, sample)
                if refine is not None:
                    case = refine(case)
            except _Refused as refusal:
                refusals.append(refusal)
                continue
            except Exception as error:  # noqa: BLE001 - the op's own failure on a sample is a reason
                refusals.append(_Refused("sample_error", f"sample {index}: {type(error).__name__}: {str(error)[:200]}"))
                continue
            cases.append(case)
    except Exception as error:  # noqa: BLE001 - a broken sample generator is a reason
        if not cases:
            return Excluded(entry, "sample_error", f"the sample generator fails: {type(error).__name__}: {str(error)[:200]}")
    if cases:
        # Best first; equal scores in OpInfo's own order.
        return sorted(cases, key=lambda case: case.score(), reverse=True)
    if not refusals:
        return Excluded(entry, "sample_error", "no float32 samples on the CPU")
    telling = min(refusals, key=lambda refusal: _ORDER.index(refusal.reason))
    return Excluded(entry, telling.reason, telling.detail)
