"""One forward of a model on the meta device, every aten op recorded with its shapes, dtypes and
strides, grouped by (op, arguments) and costed on a roofline.

A call's cost is its modelled time on `PROFILE` (max(bytes / bandwidth, FLOPs / peak)):
bytes are every tensor it reads plus what it writes, FLOPs torch's FLOP counter's (the
matmul and convolution families) or one per output element for everything else. A
group's share is its calls' time over the whole forward's. It is a direction for which
ops matter, not a timing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

from gym.tasks.models.graph import BANDWIDTH, PEAK_FLOPS, PROFILE_NAME, Graph, Ref
from gym.worker.torch_policy import PLUMBING_OPS

__all__ = ["BANDWIDTH", "PEAK_FLOPS", "PROFILE_NAME", "OpGroup", "TensorSpec", "cost_of", "groups_of", "trace"]


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument as the model passed it."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    stride: tuple[int, ...]

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _spec(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return TensorSpec(tuple(value.shape), value.dtype, tuple(value.stride()))
    if isinstance(value, (list, tuple)):
        return type(value)(_spec(item) for item in value)
    if isinstance(value, dict):
        return {key: _spec(item) for key, item in value.items()}
    return value


def _tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor in a nest of lists, tuples and dicts, in order."""
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _key(value: Any) -> Any:
    """A hashable form of an argument template (floats by repr, so 0.1 and 0.1 agree)."""
    if isinstance(value, TensorSpec):
        return ("T", value.shape, str(value.dtype), value.stride)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(item) for item in value))
    if isinstance(value, dict):
        return ("D", tuple(sorted((key, _key(item)) for key, item in value.items())))
    if isinstance(value, float):
        return ("F", repr(value))
    return ("V", repr(value))


@dataclass
class OpGroup:
    """Every call of one aten overload with the same arguments."""

    op: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    calls: int = 0
    bytes: int = 0
    flops: int = 0
    seconds: float = 0.0
    share: float = 0.0
    outputs: list[TensorSpec] = field(default_factory=list)
    # The graph nodes of its calls (gym.tasks.models.graph), when built from a graph.
    nodes: list[int] = field(default_factory=list)


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[Any, OpGroup] = {}
        self.order: list[Any] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = f"aten.{func.overloadpacket.__name__}"
        if name in PLUMBING_OPS:
            return out
        spec_args, spec_kwargs = _spec(tuple(args)), _spec(dict(kwargs))
        key = (str(func), _key(spec_args), _key(spec_kwargs))
        group = self.groups.get(key)
        if group is None:
            outputs = [TensorSpec(tuple(t.shape), t.dtype, tuple(t.stride())) for t in _tensors(out)]
            group = self.groups[key] = OpGroup(op=str(func), args=spec_args, kwargs=spec_kwargs, outputs=outputs)
            self.order.append(key)
        moved = sum(t.numel() * t.element_size() for t in _tensors([args, kwargs])) + sum(t.numel() * t.element_size() for t in _tensors(out))
        counter = flop_registry.get(func.overloadpacket)
        try:
            flops = int(counter(*args, **kwargs, out_val=out)) if counter is not None else sum(t.numel() for t in _tensors(out))
        except Exception:  # noqa: BLE001 - a FLOP formula that does not apply counts as elementwise
            flops = sum(t.numel() for t in _tensors(out))
        group.calls += 1
        group.bytes += moved
        group.flops += flops
        group.seconds += max(moved / BANDWIDTH, flops / PEAK_FLOPS)
        return out


def groups_of(graph: Graph) -> list[OpGroup]:
    """The graph's compute calls grouped by (op, arguments), most costly first, shares filled in."""
    groups: dict[Any, OpGroup] = {}

    def spec(value: Any) -> Any:
        if isinstance(value, Ref):
            info = graph.values[value.value]
            return TensorSpec(info.shape, info.dtype, info.stride)
        if isinstance(value, (list, tuple)):
            return type(value)(spec(item) for item in value)
        if isinstance(value, dict):
            return {key: spec(item) for key, item in value.items()}
        return value

    for node in graph.compute_nodes():
        spec_args, spec_kwargs = spec(node.args), spec(node.kwargs)
        key = (node.name, _key(spec_args), _key(spec_kwargs))
        group = groups.get(key)
        if group is None:
            outputs = [TensorSpec(graph.values[index].shape, graph.values[index].dtype, graph.values[index].stride) for index in node.outputs]
            group = groups[key] = OpGroup(op=node.name, args=spec_args, kwargs=spec_kwargs, outputs=outputs)
        group.calls += 1
        group.bytes += node.bytes
        group.flops += node.flops
        group.seconds += node.seconds
        group.nodes.append(node.index)
    ordered = list(groups.values())
    total = sum(group.seconds for group in ordered) or 1.0
    for group in ordered:
        group.share = group.seconds / total
    return sorted(ordered, key=lambda group: -group.seconds)


def cost_of(run: Callable[[], Any], grad: bool = False) -> float:
    """The modelled time of every compute op `run()` dispatches (autograd on with `grad`: a backward pass)."""
    with torch.set_grad_enabled(grad), _Recorder() as recorder:
        run()
    return sum(group.seconds for group in recorder.groups.values())


def trace(run: Callable[[], Any]) -> tuple[list[OpGroup], Any]:
    """The op groups of `run()` (most costly first, shares filled in) and what it returned."""
    with torch.no_grad(), _Recorder() as recorder:
        result = run()
    groups = [recorder.groups[key] for key in recorder.order]
    total = sum(group.seconds for group in groups) or 1.0
    for group in groups:
        group.share = group.seconds / total
    return sorted(groups, key=lambda group: -group.seconds), result
