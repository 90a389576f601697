"""An OpInfo sample written as a KernelBench-format problem, grown to a benchmark size.

The problem is plain Python the KernelBench machinery already runs, scales and
grades (gym.tasks.kernelbench): one module-level size constant per distinct
dimension of the sample's tensors (so dimensions that must agree, like a
broadcast or a matmul's inner size, move together), a `Model` whose forward
calls the op with the sample's literal arguments, and a `get_inputs()` that
draws each tensor again in the sample's value range (the op's domain: OpInfo
draws inside it), or as the op's preconditions require at every shape (sorted,
a permutation, distinct or in-range indices, a well-conditioned matrix:
gym.tasks.opinfo.preconditions). Its own sizes are the benchmark shape: the sample's grown
until one call touches about `BENCH_ELEMENTS` elements (sizes that refuse to
grow, like the 3 of a cross product, stay); the scaler halves them back to the
public and hidden shapes.
"""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from gym.errors import ProblemError
from gym.tasks.kernelbench.problem import with_sizes
from gym.tasks.kernelbench.scaling import Footprint, footprint
from gym.tasks.opinfo.preconditions import helper_source
from gym.tasks.opinfo.samples import SampleCase, TensorInput

# One call at the benchmark shape touches at least this many elements (inputs and outputs)...
BENCH_ELEMENTS = 1 << 21
# ...and at most this many, nor more FLOPs than this (a GPU's few milliseconds).
BENCH_MAX_ELEMENTS = 1 << 25
BENCH_MAX_FLOPS = 1 << 38


def _number(value: float) -> str:
    if math.isinf(value):
        return "float('inf')" if value > 0 else "float('-inf')"
    if math.isnan(value):
        return "float('nan')"
    return repr(float(f"{value:.6g}"))


def literal(value: Any) -> str:
    """Python source for an argument OpInfo passes (ints, floats, bools, None, strings, dtypes, sequences)."""
    if isinstance(value, TensorInput):
        return value.param
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, torch.Size):
        value = tuple(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    raise ProblemError(f"cannot write {type(value).__name__} as a literal")


def size_names(case: SampleCase) -> dict[int, str]:
    """One size constant per distinct dimension of at least 2, in order of first appearance."""
    names: dict[int, str] = {}
    for tensor in case.tensors:
        for dim in tensor.shape:
            if dim >= 2 and dim not in names:
                names[dim] = f"s{len(names)}"
    return names


def _dims(tensor: TensorInput, names: dict[int, str]) -> str:
    parts = [names.get(dim, str(dim)) for dim in tensor.shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


# How float inputs are drawn, tried in this order until the op's outputs depend on them (the
# importer's choose_mode): uniform over the sample's range; normal around its middle (a max over a
# bounded range is the same number for every seed); whole numbers in the range (ties, zeros and
# equalities for comparisons and logical ops); uniform with a few infinities and NaNs (isinf,
# nan_to_num).
MODES = ("uniform", "normal", "discrete", "special")

_SPECIAL_HELPER = [
    "def _with_specials(x):",
    "    pick = torch.rand(x.shape)",
    "    x = torch.where(pick < 0.04, float('inf'), x)",
    "    x = torch.where((pick >= 0.04) & (pick < 0.08), float('-inf'), x)",
    "    return torch.where((pick >= 0.08) & (pick < 0.12), float('nan'), x)",
    "",
    "",
]


def _draw(tensor: TensorInput, names: dict[int, str], mode: str = "uniform") -> str:
    shape = _dims(tensor, names)
    if tensor.dtype == torch.bool:
        fraction = min(0.9, max(0.1, round(tensor.low, 2)))
        return f"torch.rand({shape}) < {fraction!r}"
    if tensor.dtype.is_floating_point:
        low, high = float(f"{tensor.low:.4g}"), float(f"{tensor.high:.4g}")
        low, high = max(low, tensor.low), min(high, tensor.high)
        if high <= low:
            text = f"torch.full({shape}, {_number(low)})"
        elif mode == "normal":
            text = f"torch.randn({shape}) * {_number((high - low) / 4)} + {_number((high + low) / 2)}"
        elif mode == "discrete" and math.floor(high) >= math.ceil(low):
            text = f"torch.randint({math.ceil(low)}, {math.floor(high) + 1}, {shape}).to(torch.float32)"
        else:
            text = f"torch.rand({shape}) * {_number(high - low)} + {_number(low)}"
        if mode == "special":
            text = f"_with_specials({text})"
        return text if tensor.dtype == torch.float32 else f"({text}).to({tensor.dtype})"
    low, high = int(tensor.low), int(tensor.high)
    upper = names.get(high + 1, str(high + 1)) if tensor.bounded else str(high + 1)
    return f"torch.randint({low}, {upper}, {shape}, dtype={tensor.dtype})"


_FIELD = re.compile(r"\{(draw|shape|dim(\d+))(?::(\w+))?\}")


def _fill(template: str, tensor: TensorInput | None, by_param: dict[str, TensorInput], names: dict[int, str], mode: str) -> str:
    """A precondition draw's template (TensorInput.draw) with its fields written out: {draw}, {shape},
    {dim<i>} of `tensor`, or of the tensor named after the colon ({shape:x})."""

    def field(match: re.Match[str]) -> str:
        target = by_param[match.group(3)] if match.group(3) else tensor
        if target is None:
            raise ProblemError(f"the draw {template!r} names no tensor")
        if match.group(1) == "draw":
            return _draw(target, names, mode)
        if match.group(1) == "shape":
            return _dims(target, names)
        dim = target.shape[int(match.group(2))]
        return names.get(dim, str(dim))

    return _FIELD.sub(field, template)


def _in_draw_order(tensors: list[TensorInput]) -> list[TensorInput]:
    """The tensors with each one after those its draw uses (`after`), otherwise in the order given."""
    ordered: list[TensorInput] = []
    placed: set[str] = set()
    pending = list(tensors)
    while pending:
        ready = next((t for t in pending if all(name in placed or name not in {p.param for p in tensors} for name in t.after)), pending[0])
        ordered.append(ready)
        placed.add(ready.param)
        pending.remove(ready)
    return ordered


def _input_lines(case: SampleCase, names: dict[int, str], mode: str) -> list[str]:
    """get_inputs' body before its return: the preconditions' prelude, then one draw per tensor."""
    by_param = {tensor.param: tensor for tensor in case.tensors}
    lines = [f"    {_fill(line, None, by_param, names, mode)}" for line in case.prelude]
    for tensor in _in_draw_order(case.tensors):
        text = _fill(tensor.draw, tensor, by_param, names, mode) if tensor.draw else _draw(tensor, names, mode)
        lines.append(f"    {tensor.param} = {text}")
    return lines


def render(case: SampleCase, torch_version: str, mode: str = "uniform") -> str:
    """The problem's source at the sample's own sizes, its float inputs drawn the `mode` way (MODES)."""
    names = size_names(case)
    params = [tensor.param for tensor in case.tensors]
    call_args = [literal(value) for value in case.args] + [f"{key}={literal(value)}" for key, value in case.kwargs.items()]
    doc = case.docstring.replace("\\", "\\\\").replace('"""', "'''")
    lines = [
        f'"""{case.origin}, as one kernel task.'
        if case.origin
        else f'"""OpInfo `{case.entry.full_name}`: sample {case.index} of torch {torch_version}\'s op database, as one kernel task.',
        "",
        f"The reference calls {case.callee}; it dispatches {case.compute_op}.",
        *(["", "The inputs keep the op's preconditions at every shape:", *(f"- {note}" for note in case.preconditions)] if case.preconditions else []),
        '"""',
        "",
        "import torch",
        "import torch.nn as nn",
        "",
    ]
    for dim, name in names.items():
        lines.append(f"{name} = {dim}")
    lines += [
        "",
        "",
        "class Model(nn.Module):",
        f'    """{doc or case.entry.full_name}"""',
        "",
        "    def __init__(self):",
        "        super().__init__()",
        "",
        f"    def forward(self, {', '.join(params)}):",
        f"        return {case.callee}({', '.join(call_args)})",
        "",
        "",
        *(_SPECIAL_HELPER if mode == "special" else []),
        *helper_source(case.helpers),
        "def get_inputs():",
        *_input_lines(case, names, mode),
    ]
    lines += [
        f"    return [{', '.join(params)}]",
        "",
        "",
        "def get_init_inputs():",
        "    return []",
        "",
    ]
    return "\n".join(lines)


def _fits(measured: Footprint) -> bool:
    return measured.elements <= BENCH_MAX_ELEMENTS and measured.flops <= BENCH_MAX_FLOPS


def grow(source: str, sizes: dict[str, int], label: str) -> tuple[dict[str, int], list[str]]:
    """Benchmark sizes: all sizes doubled together while the op allows and the call stays under
    BENCH_ELEMENTS, then each alone; sizes the op refuses to grow stay."""
    notes: list[str] = []
    current = dict(sizes)

    def probe(candidate: dict[str, int]) -> Footprint | None:
        try:
            measured = footprint(source, candidate, label)
        except ProblemError:
            return None
        return measured if _fits(measured) else None

    measured = probe(current)
    if measured is None:
        raise ProblemError(f"the sample does not run at its own sizes {sizes}")
    frozen: set[str] = set()
    while measured.elements < BENCH_ELEMENTS and current:
        together = {name: value * 2 for name, value in current.items() if name not in frozen}
        trial = probe({**current, **together}) if together else None
        if trial is not None:
            current, measured = {**current, **together}, trial
            continue
        grown = False
        for name in [name for name in current if name not in frozen]:
            alone = probe({**current, name: current[name] * 2})
            if alone is None:
                frozen.add(name)
                notes.append(f"{name} stays {current[name]} (the op refuses {current[name] * 2})")
                continue
            current, measured, grown = {**current, name: current[name] * 2}, alone, True
            if measured.elements >= BENCH_ELEMENTS:
                break
        if not grown:
            break
    return current, notes


def bench_problem(case: SampleCase, torch_version: str, label: str, mode: str = "uniform") -> tuple[str, list[str]]:
    """The problem's source with its benchmark sizes as its own, and what growing it did."""
    source = render(case, torch_version, mode)
    sizes = {name: dim for dim, name in size_names(case).items()}
    bench, notes = grow(source, sizes, label)
    return with_sizes(source, bench), notes
