"""One forward of a model on the meta device as a dataflow graph: every aten op (plumbing included)
with the tensors it reads and writes, where each tensor came from, and which module ran it.

The op-group recorder (gym.tasks.models.trace) says which ops cost the most; this graph says what
feeds what, so a task can be the model's own call (its views, transposes and slices replayed from
the tensors the model holds: a transposed weight stays transposed) and consecutive ops can be cut
out as one fused task (gym.tasks.models.fusion).

A tensor is a `Value`: its shape, strides, storage offset and dtype, the node that produced it
(None for a leaf: a parameter, a buffer, a model input, a cache tensor), and whether it is
*constant*: computed from no data at all (an `arange` of positions, a causal mask built from
`ones` and `tril`), so a task draws it again exactly as the model builds it instead of at random.
Ops inside a `scaled_dot_product_attention` call (on the meta device torch runs its math
decomposition) are marked with that call's number, so an attention stays one region.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map
from torch.utils.flop_counter import flop_registry

from gym.worker.torch_policy import PLUMBING_OPS

# The GPU the costs are modelled on: NVIDIA H100 SXM, fp32 without tensor cores (NVIDIA H100 datasheet:
# 3.35 TB/s HBM3, 67 TFLOP/s FP32).
PROFILE_NAME = "H100 SXM (fp32)"
BANDWIDTH = 3.35e12
PEAK_FLOPS = 67e12


@dataclass(frozen=True)
class Ref:
    """A tensor argument or result: the graph's value number."""

    value: int


@dataclass
class Value:
    """One tensor the forward made or read."""

    index: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    dtype: torch.dtype
    # The node that produced it and its position among that node's tensor outputs; None for a leaf.
    producer: int | None = None
    slot: int = 0
    # For a leaf: "param:<name>", "buffer:<name>" or "leaf".
    leaf: str | None = None
    requires_grad: bool = False
    # Computed from no data (factories, arange, masks): a task rebuilds it as the model does.
    constant: bool = False

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def spec(self) -> tuple[Any, ...]:
        return (self.shape, self.stride, str(self.dtype))


@dataclass
class Node:
    """One aten call."""

    index: int
    op: Any  # torch._ops.OpOverload
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    # The result with Refs in place of tensors (a Ref, or a tuple/list of them).
    result: Any
    outputs: list[int]
    module: str
    sdpa: int | None
    plumbing: bool
    inplace: bool
    bytes: int = 0
    flops: int = 0
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return str(self.op)

    @property
    def packet(self) -> str:
        return f"aten.{self.op.overloadpacket.__name__}"

    def inputs(self) -> list[int]:
        """Value numbers of every tensor argument, in order."""
        return [leaf.value for leaf in tree_leaves([self.args, self.kwargs]) if isinstance(leaf, Ref)]


@dataclass
class Graph:
    values: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    # Values the model returned (its outputs, a KV cache's tensors).
    returned: set[int] = field(default_factory=set)
    # value -> the nodes that read it.
    consumers: dict[int, list[int]] = field(default_factory=dict)

    def producer(self, value: int) -> Node | None:
        index = self.values[value].producer
        return None if index is None else self.nodes[index]

    def roots(self, value: int) -> list[int]:
        """The values a value is a view or copy of, through plumbing (itself when made by a compute op or a leaf)."""
        found: list[int] = []
        stack = [value]
        seen: set[int] = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            node = self.producer(current)
            if node is None or not node.plumbing or not node.inputs():
                found.append(current)
                continue
            stack.extend(node.inputs())
        return found

    def views(self, value: int) -> set[int]:
        """The value and every value made from it by plumbing (its views, reshapes and copies)."""
        found: set[int] = set()
        stack = [value]
        while stack:
            current = stack.pop()
            if current in found:
                continue
            found.add(current)
            for index in self.consumers.get(current, []):
                if self.nodes[index].plumbing:
                    stack.extend(self.nodes[index].outputs)
        return found

    def readers(self, value: int) -> set[int]:
        """The compute nodes that read the value, directly or through plumbing."""
        return {index for view in self.views(value) for index in self.consumers.get(view, []) if not self.nodes[index].plumbing}

    def compute_nodes(self) -> Iterator[Node]:
        return (node for node in self.nodes if not node.plumbing)


def _flops(func: Any, args: Any, kwargs: Any, out: Any, tensors_out: list[torch.Tensor]) -> int:
    counter = flop_registry.get(func.overloadpacket)
    try:
        return int(counter(*args, **kwargs, out_val=out)) if counter is not None else sum(t.numel() for t in tensors_out)
    except Exception:  # noqa: BLE001 - a FLOP formula that does not apply counts as elementwise
        return sum(t.numel() for t in tensors_out)


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


class _Sdpa(TorchFunctionMode):
    """Numbers each scaled_dot_product_attention call, for the recorder."""

    def __init__(self, recorder: GraphRecorder) -> None:
        super().__init__()
        self.recorder = recorder
        self.calls = 0

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") != "scaled_dot_product_attention" or self.recorder.sdpa is not None:
            return func(*args, **kwargs)
        self.recorder.sdpa = self.calls
        self.calls += 1
        try:
            return func(*args, **kwargs)
        finally:
            self.recorder.sdpa = None


class GraphRecorder(TorchDispatchMode):
    """Records every aten call into a Graph (see the module docstring)."""

    def __init__(self, names: dict[int, str] | None = None) -> None:
        super().__init__()
        self.graph = Graph()
        # id(tensor) -> its current value number; the tensors are kept alive so ids are never reused.
        self._ids: dict[int, int] = {}
        self._alive: list[torch.Tensor] = []
        self._names = names or {}
        self.module = ""
        self.sdpa: int | None = None

    def value_of(self, tensor: torch.Tensor) -> int:
        known = self._ids.get(id(tensor))
        if known is not None:
            return known
        name = self._names.get(id(tensor))
        value = self._new(tensor, producer=None, slot=0)
        value.leaf = name or "leaf"
        value.constant = tensor.numel() == 0
        return value.index

    def _new(self, tensor: torch.Tensor, producer: int | None, slot: int) -> Value:
        value = Value(
            index=len(self.graph.values),
            shape=tuple(tensor.shape),
            stride=tuple(tensor.stride()),
            offset=int(tensor.storage_offset()),
            dtype=tensor.dtype,
            producer=producer,
            slot=slot,
            requires_grad=bool(tensor.requires_grad),
        )
        self.graph.values.append(value)
        self._ids[id(tensor)] = value.index
        self._alive.append(tensor)
        return value

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        graph = self.graph
        template_args = tree_map(lambda item: Ref(self.value_of(item)) if isinstance(item, torch.Tensor) else item, tuple(args))
        template_kwargs = tree_map(lambda item: Ref(self.value_of(item)) if isinstance(item, torch.Tensor) else item, dict(kwargs))
        packet = f"aten.{func.overloadpacket.__name__}"
        plumbing = packet in PLUMBING_OPS
        schema = func._schema
        inplace = any(arg.alias_info is not None and arg.alias_info.is_write for arg in schema.arguments)
        node = Node(
            index=len(graph.nodes),
            op=func,
            args=template_args,
            kwargs=template_kwargs,
            result=None,
            outputs=[],
            module=self.module,
            sdpa=self.sdpa,
            plumbing=plumbing,
            inplace=inplace,
        )
        inputs = node.inputs()
        slot = [0]

        def output(item: Any) -> Any:
            if not isinstance(item, torch.Tensor):
                return item
            value = self._new(item, producer=node.index, slot=slot[0])
            slot[0] += 1
            node.outputs.append(value.index)
            return Ref(value.index)

        node.result = tree_map(output, out) if not isinstance(out, torch.Tensor) else output(out)
        constant = all(graph.values[index].constant for index in inputs)
        for index in node.outputs:
            graph.values[index].constant = constant
        for index in set(inputs):
            graph.consumers.setdefault(index, []).append(node.index)
        if not plumbing:
            tensors_out = _tensors(out)
            moved = sum(t.numel() * t.element_size() for t in _tensors([args, kwargs])) + sum(t.numel() * t.element_size() for t in tensors_out)
            node.flops = _flops(func, args, kwargs, out, tensors_out)
            node.bytes = moved
            node.seconds = max(moved / BANDWIDTH, node.flops / PEAK_FLOPS)
        graph.nodes.append(node)
        return out


def _module_hooks(recorder: GraphRecorder, model: torch.nn.Module) -> list[Any]:
    names = {id(module): name for name, module in model.named_modules()}
    stack: list[str] = []

    def before(module: torch.nn.Module, *_: Any) -> None:
        stack.append(recorder.module)
        recorder.module = names.get(id(module), recorder.module)

    def after(module: torch.nn.Module, *_: Any) -> None:
        recorder.module = stack.pop() if stack else ""

    return [torch.nn.modules.module.register_module_forward_pre_hook(before), torch.nn.modules.module.register_module_forward_hook(after, always_call=True)]


def record_graph(model: torch.nn.Module, run: Callable[[], Any], grad: bool = False) -> tuple[Graph, Any]:
    """The graph of `run()` (which calls `model`) and what it returned; `grad`: with autograd on
    (each value's requires_grad then says whether the model's loss would reach it)."""
    names: dict[int, str] = {}
    for name, parameter in model.named_parameters():
        names[id(parameter)] = f"param:{name}"
    for name, buffer in model.named_buffers():
        names[id(buffer)] = f"buffer:{name}"
    recorder = GraphRecorder(names)
    hooks = _module_hooks(recorder, model)
    try:
        with torch.set_grad_enabled(grad), _Sdpa(recorder), recorder:
            result = run()
    finally:
        for hook in hooks:
            hook.remove()
    recorder.graph.returned = {recorder._ids[id(tensor)] for tensor in _result_tensors(result) if id(tensor) in recorder._ids}
    # Autograd attaches to an op's outputs after the dispatch returns: read requires_grad now.
    for value, tensor in zip(recorder.graph.values, recorder._alive):
        value.requires_grad = value.requires_grad or bool(tensor.requires_grad)
    return recorder.graph, result


def _result_tensors(result: Any) -> list[torch.Tensor]:
    """Every tensor a model's output holds, its KV cache's included."""
    found: list[torch.Tensor] = []
    items = list(result.values()) if hasattr(result, "values") and callable(result.values) else [result]
    for item in items:
        found += _tensors(item)
        for layer in getattr(item, "layers", []) or []:
            for attribute in ("keys", "values"):
                tensor = getattr(layer, attribute, None)
                if isinstance(tensor, torch.Tensor):
                    found.append(tensor)
    return found
