"""Fusion regions of a traced model: the runs of consecutive ops a real kernel fuses, and their names.

A region grows along the graph in program order (gym.tasks.models.graph): a compute op joins the
open region that produced one of its inputs, or, when it reads none, the region that ran just
before it and shares an input with it (the key half of a rotary embedding joins the query half
through their shared cos and sin); otherwise it starts one. A matmul or convolution (an *anchor*,
which stays in torch) closes every open region, except one that only shares the previous anchor's
input (the up projection of a SwiGLU MLP runs between the gate's activation and the product, and
reads what the gate read). An attention (`scaled_dot_product_attention`, which the meta device
runs as its math decomposition) is one region of its own, its matmuls anchors. Ops computed from
no data (masks, positions) are never in a region: they are its inputs, rebuilt as the model
builds them (gym.tasks.models.render).

A region whose ops are all elementwise and which reads exactly one anchor's output takes that
anchor in as its head (a bias and activation after a matmul, a batch norm and ReLU after a
convolution): the task's reference calls the anchor, which the submission may call too
(`allowed_torch`); everything after it must run in Triton. A head `addmm` is written as `mm`
plus the bias add, so the bias is part of the fused epilogue. Regions with fewer than two ops
(counting a head anchor) are single ops, which the per-op tasks already cover.

`pattern` names a region by what it computes, from its ops: `linear_gelu_tanh`, `residual_rms_norm`,
`swiglu`, `rotary`, `qk_norm_rotary`, `masked_softmax`, `attention_gqa`, `conv_batch_norm_relu`, ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gym.tasks.kernelbench.importer import ANCHOR_FAMILIES
from gym.tasks.models.graph import Graph, Node
from gym.tasks.models.render import Cut
from gym.tasks.opinfo.samples import RANDOM_OPS

# Matmuls and convolutions: they may stay in torch (the KernelBench importer's anchor families).
ANCHORS = frozenset(f"aten.{name}" for family in ("matmul", "convolution") for name in ANCHOR_FAMILIES[family])
# Ops that combine elements along an axis (a region with one is not a matmul epilogue).
REDUCING = frozenset(
    f"aten.{name}"
    for name in (
        "softmax",
        "_softmax",
        "_safe_softmax",
        "log_softmax",
        "_log_softmax",
        "native_layer_norm",
        "layer_norm",
        "native_group_norm",
        "native_batch_norm",
        "_native_batch_norm_legit",
        "mean",
        "sum",
        "amax",
        "amin",
        "max",
        "min",
        "var",
        "var_mean",
        "std",
        "norm",
        "linalg_vector_norm",
        "cumsum",
        "topk",
        "sort",
        "argmax",
        "argmin",
        "logsumexp",
        "prod",
        "cat",
        "embedding",
        "index",
        "gather",
    )
)
# The most compute ops in one region (a longer run is cut).
MAX_OPS = 24


@dataclass
class Region:
    nodes: list[int] = field(default_factory=list)
    sdpa: int | None = None
    head: int | None = None


def _is_anchor(node: Node) -> bool:
    return node.packet in ANCHORS


def _skipped(graph: Graph, node: Node) -> bool:
    """Ops no region takes: constants, random draws, copies out of an empty cache."""
    if node.packet in RANDOM_OPS or all(graph.values[value].constant for value in node.outputs):
        return True
    return any(graph.values[value].numel == 0 for value in node.inputs())


def regions(graph: Graph) -> list[Region]:
    """Every region of the graph, in program order (see the module docstring)."""
    found: list[Region] = []
    open_regions: list[Region] = []
    attention: dict[int, Region] = {}
    made_by: dict[int, Region] = {}  # compute value -> its region
    last_anchor_roots: set[int] = set()
    previous: Region | None = None

    def close(region: Region) -> None:
        if region in open_regions:
            open_regions.remove(region)

    for node in graph.compute_nodes():
        if node.sdpa is not None:
            if _skipped(graph, node):
                continue
            region = attention.get(node.sdpa)
            if region is None:
                region = attention[node.sdpa] = Region(sdpa=node.sdpa)
                found.append(region)
            region.nodes.append(node.index)
            continue
        if _is_anchor(node):
            roots = {root for value in node.inputs() for root in graph.roots(value)}
            if not roots & last_anchor_roots:
                open_regions.clear()
            last_anchor_roots = roots
            previous = None
            continue
        if _skipped(graph, node):
            continue
        roots = {root for value in node.inputs() for root in graph.roots(value)}
        feeding = [region for region in open_regions if any(made_by.get(root) is region for root in roots)]
        if not feeding and previous is not None and previous in open_regions:
            shared = {root for index in previous.nodes for value in graph.nodes[index].inputs() for root in graph.roots(value)}
            if roots & shared:
                feeding = [previous]
        if feeding:
            region = feeding[0]
            for other in feeding[1:]:
                region.nodes = sorted(region.nodes + other.nodes)
                for index in other.nodes:
                    for value in graph.nodes[index].outputs:
                        made_by[value] = region
                close(other)
                found.remove(other)
        else:
            region = Region()
            found.append(region)
            open_regions.append(region)
        region.nodes.append(node.index)
        for value in node.outputs:
            made_by[value] = region
        previous = region
        if len(region.nodes) >= MAX_OPS:
            close(region)
    return found


def outputs_of(graph: Graph, nodes: list[int]) -> list[int]:
    """The values the nodes make that anything outside them reads (or the model returns)."""
    inside = set(nodes)
    outputs: list[int] = []
    for index in nodes:
        for value in graph.nodes[index].outputs:
            if graph.readers(value) - inside or graph.views(value) & graph.returned:
                outputs.append(value)
    return outputs


def _reduces(node: Node) -> bool:
    if node.packet == "aten.native_batch_norm":
        # native_batch_norm(input, weight, bias, running_mean, running_var, training, ...): in eval, a per-channel affine map.
        return len(node.args) <= 5 or bool(node.args[5])
    return node.packet in REDUCING or node.packet.startswith(("aten.max_pool", "aten.avg_pool", "aten.adaptive", "aten._adaptive"))


def head_anchor(graph: Graph, region: Region) -> int | None:
    """The anchor a purely elementwise region is the epilogue of, if it reads exactly one."""
    if region.sdpa is not None or any(_reduces(graph.nodes[index]) for index in region.nodes):
        return None
    inside = set(region.nodes)
    anchors: set[int] = set()
    for index in region.nodes:
        for value in graph.nodes[index].inputs():
            for root in graph.roots(value):
                producer = graph.values[root].producer
                if producer is not None and producer not in inside and _is_anchor(graph.nodes[producer]):
                    anchors.add(producer)
    return anchors.pop() if len(anchors) == 1 else None


def cut_of(graph: Graph, region: Region, with_head: bool = True) -> Cut | None:
    """The region as a cut (None when it is a single op)."""
    nodes = list(region.nodes)
    anchors = [index for index in nodes if _is_anchor(graph.nodes[index])]
    head = head_anchor(graph, region) if with_head else None
    if head is not None:
        nodes = sorted([head, *nodes])
        anchors.append(head)
    compute = [index for index in nodes if not _is_anchor(graph.nodes[index])]
    if not compute or len(nodes) < 2:
        return None
    outputs = outputs_of(graph, nodes)
    if not outputs:
        return None
    return Cut(nodes=nodes, outputs=outputs, anchors=sorted(anchors))


# --- names ---------------------------------------------------------------------------------------

_ACTIVATIONS = {
    "aten.silu": "silu",
    "aten.relu": "relu",
    "aten.gelu": "gelu",
    "aten.sigmoid": "sigmoid",
    "aten.tanh": "tanh",
    "aten.hardtanh": "hardtanh",
    "aten.leaky_relu": "leaky_relu",
    "aten.elu": "elu",
    "aten.mish": "mish",
    "aten.softplus": "softplus",
}


def _bare(node: Node) -> str:
    """The op's packet without its in-place underscore ("aten.add_" is "aten.add")."""
    return node.packet.rstrip("_") if not node.packet.endswith("__") else node.packet


def _external_roots(graph: Graph, nodes: list[Node]) -> set[int]:
    inside = {node.index for node in nodes}
    found: set[int] = set()
    for node in nodes:
        for value in node.inputs():
            for root in graph.roots(value):
                producer = graph.values[root].producer
                if producer is None or producer not in inside:
                    found.add(root)
    return found


_PARTS = frozenset({"aten.slice", "aten.split", "aten.split_with_sizes", "aten.chunk", "aten.select", "aten.narrow", "aten.unbind"})


class _Ancestry:
    """Which outside tensors each value in a region is computed from (weights and constants aside; the
    parts of a split or slice count as different tensors: a fused gate-up projection's two halves)."""

    def __init__(self, graph: Graph, compute: list[Node]) -> None:
        self.graph = graph
        self.inside = {node.index for node in compute}
        self.known: dict[int, frozenset[int]] = {}

    def of(self, value: int) -> frozenset[int]:
        known = self.known.get(value)
        if known is not None:
            return known
        info = self.graph.values[value]
        node = self.graph.producer(value)
        if info.constant or (node is None and info.leaf is not None and info.leaf.startswith(("param:", "buffer:"))):
            found: frozenset[int] = frozenset()
        elif node is None:
            found = frozenset({value})
        elif node.plumbing:
            found = frozenset({value}) if node.packet in _PARTS else frozenset().union(*(self.of(item) for item in node.inputs()))
        elif node.index in self.inside:
            found = frozenset().union(*(self.of(item) for item in node.inputs()))
        else:
            found = frozenset({value})
        self.known[value] = found
        return found


def _is_residual(graph: Graph, node: Node, external: set[int], ancestry: _Ancestry) -> bool:
    """An add of two same-shaped activations computed from different tensors, one of them from outside
    the region (not a bias, not a scalar, not the x + 0.044715 x^3 of a tanh GELU)."""
    if _bare(node) != "aten.add" or len(node.inputs()) != 2:
        return False
    first, second = node.inputs()
    if graph.values[first].shape != graph.values[second].shape or graph.values[first].constant or graph.values[second].constant:
        return False
    if not any(root in external and graph.values[root].leaf is None for value in (first, second) for root in graph.roots(value)):
        return False
    a, b = ancestry.of(first), ancestry.of(second)
    return bool(a) and bool(b) and not a & b


def _gated(graph: Graph, compute: list[Node], ancestry: _Ancestry) -> bool:
    """A product of an activation's output with a same-sized tensor computed from something else (SwiGLU, GeGLU)."""
    activated = [node for node in compute if _bare(node) in _ACTIVATIONS or _bare(node) == "aten.gelu"]
    if not activated:
        return False
    sources = frozenset().union(*(ancestry.of(value) for node in activated for value in node.inputs()))
    downstream = {value for node in activated for value in node.outputs}
    for node in compute:
        if node.index <= min(other.index for other in activated):
            continue
        for value in node.outputs:
            if any(item in downstream for item in node.inputs()):
                downstream.add(value)
        if _bare(node) == "aten.mul" and len(node.inputs()) == 2:
            first, second = node.inputs()
            for this, other in ((first, second), (second, first)):
                if _derives(graph, this, downstream) and not _derives(graph, other, downstream):
                    gate = ancestry.of(other)
                    if gate and not gate & sources and graph.values[other].numel == graph.values[node.outputs[0]].numel:
                        return True
    return False


def _derives(graph: Graph, value: int, downstream: set[int]) -> bool:
    return value in downstream or any(root in downstream for root in graph.roots(value))


def _gelu_tanh(node: Node) -> bool:
    return node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none") == "tanh"


_NORMS = {
    "aten.native_layer_norm": "layer_norm",
    "aten.layer_norm": "layer_norm",
    "aten.native_batch_norm": "batch_norm",
    "aten._native_batch_norm_legit_no_training": "batch_norm",
    "aten._native_batch_norm_legit": "batch_norm",
    "aten.native_group_norm": "group_norm",
}
_SOFTMAX = frozenset({"aten._softmax", "aten._safe_softmax", "aten.softmax"})


def pattern(graph: Graph, cut: Cut, region_sdpa: int | None = None) -> str:
    """A short name for what the cut computes (see the module docstring): its stages in order."""
    nodes = [graph.nodes[index] for index in cut.nodes]
    compute = [node for node in nodes if not _is_anchor(node)]
    packets = [_bare(node) for node in compute]
    if region_sdpa is not None or any(node.sdpa is not None for node in nodes):
        gqa = any(graph.nodes[index].packet == "aten.expand" for index in _plumbing_between(graph, cut)) and _heads_differ(graph, cut)
        masked = any(packet in ("aten.add", "aten.where", "aten.masked_fill") for packet in packets)
        name = "attention" if any(_is_anchor(node) for node in nodes) else "attention_scores"
        return f"{'masked_' if masked else ''}{name}{'_gqa' if gqa else ''}"
    external = _external_roots(graph, compute)
    ancestry = _Ancestry(graph, compute)
    gated = _gated(graph, compute, ancestry)
    tanh_gelu = "aten.tanh" in packets and "aten.pow" in packets
    softcap = "aten.tanh" in packets and "aten.div" in packets and not tanh_gelu
    tokens: list[str] = []
    head = next((graph.nodes[index] for index in cut.anchors), None)
    if head is not None:
        tokens.append("conv" if "conv" in head.packet else ("linear" if head.packet == "aten.addmm" else "matmul"))
    for position, node in enumerate(compute):
        packet = packets[position]
        token = None
        if packet == "aten.embedding":
            token = "embedding"
        elif packet in _NORMS:
            token = _NORMS[packet]
        elif packet == "aten.rsqrt":
            token = "qk_norm" if ("q_norm" in node.module or "k_norm" in node.module) else "rms_norm"
        elif _is_residual(graph, node, external, ancestry):
            token = "residual"
        elif packet in _SOFTMAX:
            before = compute[:position]
            scaled = any(_bare(other) in ("aten.mul", "aten.div") and len(other.inputs()) == 1 for other in before)
            masked = any(_bare(other) in ("aten.add", "aten.where", "aten.masked_fill") and len(other.inputs()) >= 2 for other in before)
            token = f"{'softcap_' if softcap else ''}{'scaled_' if scaled else ''}{'masked_' if masked else ''}softmax"
        elif packet == "aten.tanh" and tanh_gelu:
            token = "gelu_tanh"
        elif packet == "aten.tanh" and softcap:
            token = None if "aten._softmax" in packets or "aten._safe_softmax" in packets else "softcap"
        elif packet == "aten.gelu":
            token = "gelu_tanh" if _gelu_tanh(node) else "gelu"
        elif packet in _ACTIVATIONS:
            token = _ACTIVATIONS[packet]
        elif packet == "aten.neg" and "aten.cat" in packets:
            token = "rotary"
        elif packet in ("aten.cos", "aten.sin"):
            token = "rotary_table"
        elif packet == "aten.topk":
            token = "topk"
        elif packet.startswith(("aten.max_pool", "aten.avg_pool", "aten.adaptive")):
            token = "pool"
        elif (
            head is not None
            and packet == "aten.add"
            and any(graph.values[value].leaf is not None and len(graph.values[value].shape) == 1 for value in node.inputs())
        ):
            token = "bias"
        if token is not None and gated and token in _GATED:
            token = _GATED[token]
        if token is not None and (not tokens or tokens[-1] != token):
            tokens.append(token)
    if len(tokens) <= (1 if head is not None else 0):
        short = [packet.removeprefix("aten.").strip("_") for packet in packets]
        tokens.append("fused_" + "_".join(list(dict.fromkeys(short))[:4]))
    return "_".join(tokens)


_ACTIVATIONS = {
    "aten.silu": "silu",
    "aten.relu": "relu",
    "aten.sigmoid": "sigmoid",
    "aten.hardtanh": "hardtanh",
    "aten.leaky_relu": "leaky_relu",
    "aten.elu": "elu",
    "aten.mish": "mish",
    "aten.softplus": "softplus",
    "aten.tanh": "tanh",
}
_GATED = {"silu": "swiglu", "gelu": "geglu", "gelu_tanh": "geglu_tanh", "relu": "reglu", "sigmoid": "glu"}


def _plumbing_between(graph: Graph, cut: Cut) -> list[int]:
    found: set[int] = set()
    for index in cut.nodes:
        stack = list(graph.nodes[index].inputs())
        while stack:
            value = stack.pop()
            node = graph.producer(value)
            if node is not None and node.plumbing and node.index not in found:
                found.add(node.index)
                stack.extend(node.inputs())
    return sorted(found)


def _heads_differ(graph: Graph, cut: Cut) -> bool:
    """Whether the attention's query and key inputs have different head counts (GQA)."""
    dims = set()
    for index in cut.nodes:
        for value in graph.nodes[index].inputs():
            for root in graph.roots(value):
                shape = graph.values[root].shape
                if len(shape) == 4:
                    dims.add(shape[1])
    return len(dims) > 1
