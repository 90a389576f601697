"""A piece of a traced model's graph written as a KernelBench-format problem, at the model's sizes.

A `Cut` names compute nodes of a `Graph` (gym.tasks.models.graph) and the values to return. The
problem's inputs are the tensors the model holds where the cut begins (*roots*): a parameter as
stored, an activation as the op before produced it. Its forward replays the model's own plumbing
from those roots (the `t` of a weight, the `view`/`transpose` of a projection into heads, the
`slice` halves of a rotary embedding) and then the cut's ops, so every op sees the strides the
model passes: a transposed weight stays transposed. A root the model computes from no data (an
`arange` of positions, a causal mask) is rebuilt in `get_inputs` as the model builds it; a float
root is drawn uniform in [-1, 1] (in [0.05, 1.05] with `positive`); an embedding's indices below
its table's rows; any other integer root leaves the cut out (`Unrenderable`).

Sizes are symbolic, so the KernelBench scaler (gym.tasks.kernelbench.scaling) keeps the op's
structure when it scales them down: one module constant per distinct dimension, except where the
graph says how dimensions relate: a view that splits 4096 into 32 heads of 128 makes 4096
`s1 * s2`; a slice or split into equal parts makes the whole `2 * half`; a convolution whose
kernel equals its stride (a patchify) makes its input `patches * kernel`; the kernel sizes of a
convolution are `kernel<i>` constants, which the scaler never changes. A GQA attention's query
heads are thereby the key heads times the group (a `view` of the expanded keys). Integer
arguments that are sizes (a view's shape, a `normalized_shape`, a slice's bounds, a depthwise
convolution's `groups`) are written with the same names.

`backward=True` writes the cut's backward instead: the forward takes one gradient per returned
float value that autograd reaches, then the roots, replays the cut with autograd on, and returns
`torch.autograd.grad` of those values with respect to the differentiable roots (the floats the
model's loss reaches: parameters and activations, not masks or positions).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from gym.errors import KernelGymError
from gym.tasks.models.graph import Graph, Node, Ref, Value
from gym.tasks.opinfo.samples import RANDOM_OPS


class Unrenderable(KernelGymError):
    """A cut that cannot be a problem; the message says why."""


@dataclass
class Cut:
    """Compute nodes of a graph (program order) and the values the problem returns."""

    nodes: list[int]
    outputs: list[int]
    # Nodes that may stay in torch (the matmul or convolution a fusion is anchored on).
    anchors: list[int] = field(default_factory=list)
    # A head `addmm(b, x, w)` is written `mm(x, w) + b` (the bias joins the fused epilogue).
    split_bias: bool = True
    # Its ops are in no other cut of the same kind (what a coverage figure may add up).
    disjoint: bool = True


@dataclass
class Root:
    value: int
    param: str
    # "float", "index" (below `bound`'s expression), "constant" (rebuilt), "bool".
    kind: str
    bound: str | None = None


@dataclass
class Rendered:
    source: str
    roots: list[Root]
    # Kernel parameters that are gradients (backward), in order.
    grads: list[str]
    # Roots the backward differentiates (backward), in order.
    wrt: list[str]
    # The model's layout of every root that is not contiguous, and the plumbing replayed.
    layout: list[str]
    # Packets of the compute ops the forward runs (the cut's ops), in order.
    ops: list[str]


# Plumbing that reshapes: its output's dims are products of its input's (or the reverse).
_RESHAPES = frozenset({"aten.view", "aten._unsafe_view", "aten.reshape", "aten.flatten", "aten.unflatten", "aten._reshape_alias", "aten.clone"})
# Schema argument names that hold sizes (written with the size names); strides, paddings and dims do not.
_SIZE_ARGS = frozenset(
    {"size", "sizes", "normalized_shape", "start", "end", "length", "split_size", "split_sizes", "groups", "repeats", "shape", "output_size", "index"}
)
_CONVOLUTIONS = frozenset({"aten.convolution", "aten._convolution"})
# Literal ints at least this large that match no dimension stay literal (a slice's "to the end").
_PARAM_NAMES = ("x", "y", "z")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: float) -> str:
    if math.isinf(value):
        return "float('inf')" if value > 0 else "float('-inf')"
    if math.isnan(value):
        return "float('nan')"
    return repr(value)


class _Sizes:
    """Dimension values -> the names or expressions they are written with."""

    def __init__(self) -> None:
        self.values: set[int] = set()
        self.kernels: set[int] = set()
        # value -> its factors (ints: dimension values; written as their expressions) and a literal factor.
        self.defs: dict[int, tuple[list[int], int]] = {}
        self.names: dict[int, str] = {}

    def add(self, shape: tuple[int, ...]) -> None:
        self.values.update(dim for dim in shape if dim >= 2)

    def relate(self, whole: int, parts: list[int], factor: int = 1) -> None:
        """`whole` = product(parts) * factor, when every part is smaller (so definitions never cycle)."""
        parts = [part for part in parts if part >= 2]
        if whole < 2 or whole in self.defs or not parts or any(part >= whole for part in parts) or whole in self.kernels:
            return
        if math.prod(parts) * factor != whole:
            return
        self.values.update(parts)
        self.defs[whole] = (parts, factor)

    def finish(self, first: dict[int, int]) -> None:
        """Names for the dimensions no relation defines, in order of first appearance (`first`)."""
        ordered = sorted(self.values - set(self.defs), key=lambda value: first.get(value, 1 << 60))
        index = 0
        kernel = 0
        for value in ordered:
            if value in self.kernels:
                self.names[value] = f"kernel{kernel}"
                kernel += 1
            else:
                self.names[value] = f"s{index}"
                index += 1

    def expr(self, value: int) -> str:
        if value in self.names:
            return self.names[value]
        definition = self.defs.get(value)
        if definition is None:
            return str(value)
        parts, factor = definition
        terms = [self.expr(part) for part in parts] + ([str(factor)] if factor != 1 else [])
        return " * ".join(terms)

    def literal(self, value: int, part: int | None = None) -> str:
        """An integer argument that may be a size: its name or expression, else the number; `part`: a
        slice's length, whose multiples its bounds are (the key third of a fused QKV projection ends
        at 2 x its length)."""
        if value >= 2 and (value in self.names or value in self.defs):
            return self.expr(value)
        if value >= 1 and (value + 1) in self.names:
            return f"{self.expr(value + 1)} - 1"
        if part is not None and part >= 2 and value > part and value % part == 0 and value < 1 << 40:
            return f"{value // part} * {self.expr(part)}"
        return str(value)

    def shape(self, shape: tuple[int, ...]) -> str:
        parts = [self.expr(dim) if dim >= 2 else str(dim) for dim in shape]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _reshape_relations(sizes: _Sizes, before: tuple[int, ...], after: tuple[int, ...]) -> None:
    """A reshape's groups of dimensions: one dimension on one side that is the product of several on the other."""
    left = [dim for dim in before if dim != 1]
    right = [dim for dim in after if dim != 1]
    i = j = 0
    while i < len(left) and j < len(right):
        group_left, group_right = [left[i]], [right[j]]
        i += 1
        j += 1
        while math.prod(group_left) != math.prod(group_right):
            if math.prod(group_left) < math.prod(group_right) and i < len(left):
                group_left.append(left[i])
                i += 1
            elif j < len(right):
                group_right.append(right[j])
                j += 1
            else:
                return
        if len(group_left) == 1 and len(group_right) > 1:
            sizes.relate(group_left[0], group_right)
        elif len(group_right) == 1 and len(group_left) > 1:
            sizes.relate(group_right[0], group_left)


def _schema_names(node: Node) -> list[str]:
    return [argument.name for argument in node.op._schema.arguments if not argument.kwarg_only]


class _Writer:
    def __init__(self, graph: Graph, cut: Cut, backward: bool, positive: bool) -> None:
        self.graph = graph
        self.cut = cut
        self.backward = backward
        self.positive = positive
        self.in_cut = set(cut.nodes)
        self.sizes = _Sizes()
        self.roots: list[Root] = []
        self.root_of: dict[int, Root] = {}
        self.expr: dict[int, str] = {}
        self.plumbing: list[int] = []
        self.constant_nodes: list[int] = []
        self.locals = 0

    # --- what the problem runs -------------------------------------------------------------
    def collect(self) -> None:
        """The plumbing between the roots and the cut's nodes, the roots, and the nodes that rebuild constants."""
        needed: set[int] = set()
        order: list[int] = []  # roots by first use

        def walk(value: int) -> None:
            info = self.graph.values[value]
            node = self.graph.producer(value)
            if info.constant or node is None or (not node.plumbing and node.index not in self.in_cut):
                if value not in order:
                    order.append(value)
                return
            if node.index in self.in_cut or node.index in needed:
                return
            if node.inplace and node.plumbing:
                target = node.inputs()[0] if node.inputs() else None
                if target is not None and self.graph.values[target].producer is None:
                    raise Unrenderable(f"{node.name} writes into a tensor the model holds")
            needed.add(node.index)
            for item in node.inputs():
                walk(item)

        for index in self.cut.nodes:
            node = self.graph.nodes[index]
            if node.packet in RANDOM_OPS:
                raise Unrenderable("random")
            for item in node.inputs():
                walk(item)
        for value in self.cut.outputs:
            walk(value)
        self.plumbing = sorted(needed)
        for value in order:
            self._root(value)

    def _root(self, value: int) -> None:
        info = self.graph.values[value]
        if info.constant and not (not info.dtype.is_floating_point and info.dtype != torch.bool and self._indexes(value)):
            kind = "constant"
        elif info.dtype.is_floating_point:
            kind = "float"
        elif info.dtype == torch.bool:
            kind = "bool"
        else:
            kind = "index"
        root = Root(value=value, param="", kind=kind)
        self.roots.append(root)
        self.root_of[value] = root

    def _indexes(self, value: int) -> bool:
        """Whether the value is an embedding's or an index's indices (drawn below the indexed size, even
        when the model computes them: positions past a scaled-down table would read out of bounds)."""
        try:
            self._index_bound(Root(value=value, param="", kind="index"))
        except Unrenderable:
            return False
        return True

    def _index_bound(self, root: Root) -> int:
        """The dimension an integer root indexes (an embedding's rows, an index's first dimension)."""
        for index in sorted(self.in_cut | set(self.plumbing)):
            node = self.graph.nodes[index]
            if node.packet == "aten.embedding" and self._reaches(node.args[1], root.value):
                return self.graph.values[node.args[0].value].shape[0]
            if node.packet == "aten.index" and isinstance(node.args[1], (list, tuple)):
                for position, item in enumerate(node.args[1]):
                    if isinstance(item, Ref) and self._reaches(item, root.value):
                        return self.graph.values[node.args[0].value].shape[position]
        raise Unrenderable("an integer tensor whose values the trace cannot know (positions, routing)")

    def _reaches(self, ref: Any, value: int) -> bool:
        return isinstance(ref, Ref) and (ref.value == value or value in self.graph.roots(ref.value))

    def constants(self) -> None:
        """Every node that builds a constant root (they run in get_inputs)."""
        needed: set[int] = set()

        def walk(value: int) -> None:
            node = self.graph.producer(value)
            if node is None or node.index in needed:
                return
            needed.add(node.index)
            for item in node.inputs():
                walk(item)

        for root in self.roots:
            if root.kind == "constant":
                walk(root.value)
        for index in needed:
            node = self.graph.nodes[index]
            if node.packet in RANDOM_OPS:
                raise Unrenderable("a constant input drawn at random")
        self.constant_nodes = sorted(needed)

    # --- sizes --------------------------------------------------------------------------------
    def measure(self) -> None:
        nodes = [self.graph.nodes[index] for index in sorted(set(self.plumbing) | self.in_cut | set(self.constant_nodes))]
        first: dict[int, int] = {}
        position = 0

        def see(shape: tuple[int, ...]) -> None:
            nonlocal position
            for dim in shape:
                if dim >= 2 and dim not in first:
                    first[dim] = position
                    position += 1
            self.sizes.add(shape)

        for root in self.roots:
            see(self.graph.values[root.value].shape)
        for node in nodes:
            for item in node.inputs() + node.outputs:
                see(self.graph.values[item].shape)
        for node in nodes:
            if node.packet in _CONVOLUTIONS:
                weight = self.graph.values[node.args[1].value]
                self.sizes.kernels.update(dim for dim in weight.shape[2:] if dim >= 2)
        for node in nodes:
            inputs = node.inputs()
            if node.packet in _RESHAPES and inputs and node.outputs:
                _reshape_relations(self.sizes, self.graph.values[inputs[0]].shape, self.graph.values[node.outputs[0]].shape)
            elif node.packet in ("aten.slice", "aten.split", "aten.split_with_sizes", "aten.chunk", "aten.narrow") and inputs:
                dim = node.args[1] if node.packet in ("aten.slice", "aten.narrow") else (node.args[2] if len(node.args) > 2 else 0)
                whole = self.graph.values[inputs[0]].shape
                for output in node.outputs:
                    part = self.graph.values[output].shape
                    if _is_int(dim) and -len(whole) <= dim < len(whole) and part[dim] >= 2 and whole[dim] % part[dim] == 0 and whole[dim] > part[dim]:
                        self.sizes.relate(whole[dim], [part[dim]], whole[dim] // part[dim])
            elif node.packet in _CONVOLUTIONS and node.outputs:
                self._patchify(node)
        self.sizes.finish(first)

    def _patchify(self, node: Node) -> None:
        """A convolution whose kernel equals its stride, without padding: its input is patches x kernel."""
        data, weight, output = (self.graph.values[node.args[0].value], self.graph.values[node.args[1].value], self.graph.values[node.outputs[0]])
        stride, padding, dilation = list(node.args[3]), list(node.args[4]), list(node.args[5])
        kernel = weight.shape[2:]
        for axis, size in enumerate(kernel):
            if axis >= len(stride) or size < 2 or stride[axis] != size or padding[axis] != 0 or dilation[axis] != 1:
                continue
            whole, patches = data.shape[2 + axis], output.shape[2 + axis]
            if whole == patches * size and patches >= 2:
                self.sizes.defs.setdefault(whole, ([patches, size], 1))
                self.sizes.values.add(patches)

    # --- writing ------------------------------------------------------------------------------
    def arg(self, value: Any, schema_name: str | None, device_of: str | None, part: int | None = None) -> str:
        if isinstance(value, Ref):
            return self.expr[value.value]
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if _is_int(value):
            return self.sizes.literal(value, part if schema_name in ("start", "end") else None) if schema_name in _SIZE_ARGS else str(value)
        if isinstance(value, float):
            return _number(value)
        if isinstance(value, torch.device):
            # In get_inputs the runtime's device context holds (aten-level factories ignore it).
            return f"{device_of}.device" if device_of else "torch.get_default_device()"
        if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
            return str(value)
        if isinstance(value, (list, tuple)):
            inner = ", ".join(self.arg(item, schema_name, device_of) for item in value)
            if isinstance(value, tuple):
                return f"({inner},)" if len(value) == 1 else f"({inner})"
            return f"[{inner}]"
        raise Unrenderable(f"cannot write a {type(value).__name__} argument")

    def call(self, node: Node, device_of: str | None, drop_device: bool = False) -> str:
        names = _schema_names(node)
        op = node.op
        if node.inplace and not node.plumbing:
            packet = op.overloadpacket.__name__
            twin = getattr(torch.ops.aten, packet.rstrip("_"), None)
            overload = op._overloadname
            if twin is None or not hasattr(twin, overload):
                raise Unrenderable(f"{node.name} is in place, with no out-of-place twin")
            op = getattr(twin, overload)
        part = None
        if node.packet == "aten.slice" and node.outputs and len(node.args) > 1 and _is_int(node.args[1]):
            part = self.graph.values[node.outputs[0]].shape[node.args[1]]
        args = [self.arg(value, names[i] if i < len(names) else None, device_of, part) for i, value in enumerate(node.args)]
        kwargs = [f"{key}={self.arg(value, key, device_of)}" for key, value in node.kwargs.items() if not (drop_device and key == "pin_memory")]
        name = str(op)
        return f"torch.ops.{name}({', '.join(args + kwargs)})"

    def _local(self, prefix: str) -> str:
        """A fresh local name, numbered in the order the problem computes (the same cut in another block reads the same)."""
        self.locals += 1
        return f"{prefix}{self.locals}"

    def assign(self, node: Node, text: str, lines: list[str], indent: str) -> None:
        if isinstance(node.result, Ref):
            name = self._local("v")
            lines.append(f"{indent}{name} = {text}")
            self.expr[node.result.value] = name
            return
        holder = self._local("r")
        lines.append(f"{indent}{holder} = {text}")

        def bind(item: Any, path: str) -> None:
            if isinstance(item, Ref):
                self.expr[item.value] = f"{holder}{path}"
            elif isinstance(item, (list, tuple)):
                for position, inner in enumerate(item):
                    bind(inner, f"{path}[{position}]")

        bind(node.result, "")

    def head_anchor_lines(self, node: Node, device_of: str | None, lines: list[str], indent: str) -> bool:
        """`addmm(b, x, w)` as `mm(x, w) + b`: the bias is the fused epilogue's, the matmul the anchor."""
        if not (self.cut.split_bias and node.packet == "aten.addmm" and node.index in self.cut.anchors):
            return False
        if node.kwargs or any(not (value == 1) for value in node.args[3:]):
            return False
        bias, left, right = (self.arg(value, None, device_of) for value in node.args[:3])
        name = self._local("v")
        lines.append(f"{indent}{name} = torch.ops.aten.add.Tensor(torch.ops.aten.mm.default({left}, {right}), {bias})")
        self.expr[node.result.value] = name
        return True

    def source(self, doc: str, origin: str) -> Rendered:
        graph = self.graph
        used_names: set[str] = set()
        floats = 0
        for root in self.roots:
            info = graph.values[root.value]
            if root.kind == "index":
                rows = self._index_bound(root)
                root.bound = self.sizes.expr(rows) if rows >= 2 else str(rows)
            root.param = self._param_name(info, root, floats, used_names)
            if root.kind == "float":
                floats += 1
            used_names.add(root.param)
            self.expr[root.value] = root.param
        device_of = next((root.param for root in self.roots), None)
        # Which outputs the backward differentiates, and with respect to which roots.
        grads: list[str] = []
        wrt: list[str] = []
        differentiable: list[int] = []
        if self.backward:
            differentiable = [value for value in self.cut.outputs if graph.values[value].dtype.is_floating_point and graph.values[value].requires_grad]
            wrt = [root.param for root in self.roots if root.kind == "float" and graph.values[root.value].requires_grad]
            if not differentiable or not wrt:
                raise Unrenderable("autograd reaches no input from the outputs")
            grads = [f"grad{i}" if len(differentiable) > 1 else "grad" for i in range(len(differentiable))]
        body: list[str] = []
        indent = "            " if self.backward else "        "
        if self.backward:
            body.append("        with torch.enable_grad():")
            for name in wrt:
                body.append(f"{indent}{name} = {name}.detach().requires_grad_()")
        ops: list[str] = []
        for index in sorted(set(self.plumbing) | self.in_cut):
            node = graph.nodes[index]
            if self.head_anchor_lines(node, device_of, body, indent):
                ops += ["aten.mm", "aten.add"]
                continue
            if not node.plumbing:
                ops.append(node.packet)
            self.assign(node, self.call(node, device_of), body, indent)
        if self.backward:
            differentiated = ", ".join(self.expr[value] for value in differentiable)
            call = f"torch.autograd.grad(({differentiated},), ({', '.join(wrt)},), ({', '.join(grads)},))"
            body.append(f"{indent}return {call}[0]" if len(wrt) == 1 else f"{indent}return {call}")
        else:
            outs = [self.expr[value] for value in self.cut.outputs]
            body.append(f"{indent}return {outs[0] if len(outs) == 1 else '(' + ', '.join(outs) + ')'}")
        inputs = self._inputs(differentiable, grads)
        params = grads + [root.param for root in self.roots]
        doc_text = doc.replace("\\", "\\\\").replace('"""', "'''")
        lines = [f'"""{origin}, as one kernel task.', '"""', "", "import torch", "import torch.nn as nn", ""]
        for value, name in sorted(self.sizes.names.items(), key=lambda item: (item[1].startswith("kernel"), int(re.sub(r"\D", "", item[1])))):
            lines.append(f"{name} = {value}")
        lines += [
            "",
            "",
            "class Model(nn.Module):",
            f'    """{doc_text}"""',
            "",
            "    def __init__(self):",
            "        super().__init__()",
            "",
            f"    def forward(self, {', '.join(params)}):",
            *body,
            "",
            "",
            "def get_inputs():",
            *inputs,
            f"    return [{', '.join(params)}]",
            "",
            "",
            "def get_init_inputs():",
            "    return []",
            "",
        ]
        layout = self._layout()
        return Rendered(source="\n".join(lines), roots=self.roots, grads=grads, wrt=wrt, layout=layout, ops=ops)

    def _param_name(self, info: Value, root: Root, floats: int, used: set[str]) -> str:
        if root.kind == "constant":
            base = "mask" if info.dtype == torch.bool or (info.dtype.is_floating_point and len(info.shape) >= 2) else "positions"
            if info.dtype.is_floating_point and len(info.shape) < 2:
                base = "table"
        elif root.kind == "index":
            base = "indices"
        elif info.leaf and info.leaf.startswith(("param:", "buffer:")):
            parts = [part for part in info.leaf.split(":", 1)[1].split(".") if not part.isdigit()]
            base = "_".join(parts[-2:]) if len(parts) >= 2 else parts[-1]
            base = re.sub(r"\W", "_", base)
        else:
            base = _PARAM_NAMES[floats] if floats < len(_PARAM_NAMES) else f"x{floats}"
        name = base
        number = 1
        while name in used or name in ("self", "grad", "torch", "nn") or re.fullmatch(r"(s|v|r|kernel|grad)\d+", name):
            name = f"{base}_{number}"
            number += 1
        return name

    def _inputs(self, differentiable: list[int], grads: list[str]) -> list[str]:
        lines: list[str] = []
        graph = self.graph
        for name, value in zip(grads, differentiable):
            lines.append(f"    {name} = {self._draw(graph.values[value])}")
        constants = [root for root in self.roots if root.kind == "constant"]
        if constants:
            expr_before, self.expr = self.expr, {}
            for index in self.constant_nodes:
                node = graph.nodes[index]
                for item in node.inputs():
                    if item not in self.expr:
                        leaf = graph.values[item]
                        if leaf.producer is None:
                            self.expr[item] = f"torch.empty({self.sizes.shape(leaf.shape)}, dtype={leaf.dtype})"
                self.assign(node, self.call(node, None, drop_device=True), lines, "    ")
            for root in constants:
                info = graph.values[root.value]
                if info.producer is None:
                    lines.append(f"    {root.param} = torch.empty({self.sizes.shape(info.shape)}, dtype={info.dtype})")
                else:
                    lines.append(f"    {root.param} = {self.expr[root.value]}")
            self.expr = expr_before
        for root in self.roots:
            info = graph.values[root.value]
            if root.kind == "constant":
                continue
            if root.kind == "index":
                lines.append(f"    {root.param} = torch.randint(0, {root.bound}, {self.sizes.shape(info.shape)}, dtype={info.dtype})")
            elif root.kind == "bool":
                lines.append(f"    {root.param} = torch.rand({self.sizes.shape(info.shape)}) < 0.5")
            else:
                lines.append(f"    {root.param} = {self._draw(info)}")
        return lines

    def _draw(self, info: Value) -> str:
        low, span = (0.05, 1.0) if self.positive else (-1.0, 2.0)
        text = f"torch.rand({self.sizes.shape(info.shape)}) * {span!r} + {low!r}"
        return text if info.dtype == torch.float32 else f"({text}).to({info.dtype})"

    def _layout(self) -> list[str]:
        notes = []
        for root in self.roots:
            info = self.graph.values[root.value]
            if not _contiguous(info.shape, info.stride):
                notes.append(f"{root.param} {info.shape} stride {info.stride} (given contiguous: the model's tensor is not dense)")
        for index in sorted(self.in_cut):
            node = self.graph.nodes[index]
            for item in node.inputs():
                info = self.graph.values[item]
                if not _contiguous(info.shape, info.stride) and info.numel > 1:
                    entry = f"{node.packet.removeprefix('aten.')} reads {info.shape} with stride {info.stride}"
                    if entry not in notes:
                        notes.append(entry)
        return notes


def _contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    expected = 1
    for size, step in reversed(list(zip(shape, stride))):
        if size != 1 and step != expected:
            return False
        expected *= size
    return True


def render_cut(graph: Graph, cut: Cut, doc: str, origin: str, *, backward: bool = False, positive: bool = False) -> Rendered:
    """The cut as a problem's source (Unrenderable when it cannot be one)."""
    writer = _Writer(graph, cut, backward, positive)
    writer.collect()
    if not any(root.kind in ("float",) for root in writer.roots):
        raise Unrenderable("no float input (the cut computes a constant)")
    writer.constants()
    writer.measure()
    return writer.source(doc, origin)


def signature(rendered: Rendered) -> str:
    """What makes two renderings the same task: the source without its docstrings, its inputs by
    position (the first block's `ln_1_weight` and the second's `ln_2_weight` are one problem)."""
    text = re.sub(r'"""[\s\S]*?"""', "", rendered.source)
    for position, name in enumerate([*rendered.grads, *(root.param for root in rendered.roots)]):
        text = re.sub(rf"\b{re.escape(name)}\b", f"_input{position}", text)
    return text


def tensors_in(value: Any) -> list[Ref]:
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, Ref)]
