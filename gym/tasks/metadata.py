"""A task's metadata for curricula and split reports (gym.schema.task_metadata.TaskMetadata), and
what it is read from: the aten ops the reference dispatches.

`record_dispatch` runs a reference under a TorchDispatchMode and keeps its compute ops (overloads in
order of first dispatch; plumbing, factories and bookkeeping aside), its outputs' dtypes and
whether they are smaller than its inputs. `op_kind_from_dispatch` reads the **op kind** from those
ops and their schemas, never from a name: convolution, matmul (the matmul family, attention,
pairwise distances), linalg (matrix functions: `matrix_exp`, `cholesky_inverse`, solves,
determinants), normalisation (`native_layer_norm`, batch and group norm, softmax, and any
composite that reduces an axis and rescales the whole input by it), scan (`cumsum`, ...),
selection (sort, top-k, order statistics), indexing (an integer index argument: `gather`,
`embedding`, `index_put`, grid sampling, upsampling), reduction (a `keepdim` or `reduction`
argument that shrinks the output, pooling, histograms), integer (every output an integer or
bool: comparisons, `argmax`, `searchsorted`) and elementwise. A reference of several ops (a
fusion) has the kind of its most structured op, in that order. The split family is
gym.tasks.splits.family_key of the same ops.

Imported tasks carry what their importer recorded (`[kernelbench]`: dispatched ops, op kind,
output kind, aten op count, cost per shape); anything missing is measured here once per task
version by running the reference at its public shape, float32.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from gym.schema.task_metadata import TaskMetadata
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.model import Task
from gym.tasks.references import reference_outputs
from gym.tasks.shape_expr import evaluate
from gym.tasks.splits import canonical_op, family_key, family_of, op_sequence, source_of, stored_dispatch
from gym.worker.dtypes import dtype_from_name
from gym.worker.torch_policy import PLUMBING_OPS

# Every op kind, most structured first: a fusion has the kind of its first op kind in this order.
OP_KINDS: tuple[str, ...] = (
    "convolution",
    "matmul",
    "linalg",
    "normalisation",
    "scan",
    "selection",
    "indexing",
    "reduction",
    "integer",
    "elementwise",
)

# aten packets (canonical, gym.tasks.splits.canonical_op) whose kind no schema tells.
_KIND_TABLE: dict[str, tuple[str, ...]] = {
    "convolution": (
        "convolution",
        "conv_depthwise2d",
        "_conv_depthwise2d",
        "slow_conv3d_forward",
        "slow_conv_transpose2d",
        "slow_conv_transpose3d",
        "slow_conv_dilated2d",
        "slow_conv_dilated3d",
        "cudnn_convolution",
        "cudnn_convolution_transpose",
        "miopen_convolution",
        "convolution_overrideable",
        "conv_tbc",
        "_nnpack_spatial_convolution",
        "thnn_conv2d",
        "convolution_backward",
        "mkldnn_convolution_transpose",
    ),
    "matmul": (
        "mm",
        "addmm",
        "bmm",
        "baddbmm",
        "addbmm",
        "mv",
        "addmv",
        "dot",
        "vdot",
        "addr",
        "_addmm_activation",
        "_int_mm",
        "_scaled_mm",
        "cdist",
        "_euclidean_dist",
        "_pdist_forward",
        "_cdist_backward",
        "scaled_dot_product_attention",
        "_flash_attention_forward",
        "_efficient_attention_forward",
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        "_weight_int4pack_mm",
        "_weight_int8pack_mm",
        "mkldnn_linear",
        # Recurrent layers: a matmul per step.
        "mkldnn_rnn_layer",
        "_cudnn_rnn",
        "miopen_rnn",
        "lstm",
        "gru",
        "rnn_tanh",
        "rnn_relu",
        "_thnn_fused_lstm_cell",
        "_thnn_fused_gru_cell",
    ),
    "linalg": (
        "matrix_exp",
        "cholesky",
        "cholesky_inverse",
        "cholesky_solve",
        "_cholesky_solve_helper",
        "linalg_inv",
        "inverse",
        "linalg_det",
        "det",
        "linalg_slogdet",
        "logdet",
        "linalg_solve",
        "triangular_solve",
        "linalg_solve_triangular",
        "lu_solve",
        "linalg_lu_solve",
        "linalg_lu_factor_ex",
        "linalg_lu",
        "linalg_eigh",
        "linalg_eig",
        "linalg_svd",
        "linalg_householder_product",
        "geqrf",
        "ormqr",
        "linalg_qr",
        "linalg_ldl_factor_ex",
        "linalg_ldl_solve",
        "_linalg_eigvals",
        "linalg_eigvals",
        "linalg_pinv",
        "linalg_lstsq",
        "linalg_matrix_power",
        "matrix_power",
    ),
    "normalisation": (
        "native_layer_norm",
        "native_batch_norm",
        "batch_norm_elemt",
        "native_group_norm",
        "_fused_rms_norm",
        "rms_norm",
        "_softmax",
        "_log_softmax",
        "_masked_softmax",
        "_weight_norm_interface",
        "renorm",
        "native_layer_norm_backward",
        "native_batch_norm_backward",
        "native_group_norm_backward",
        "_fused_rms_norm_backward",
        "_softmax_backward_data",
        "_log_softmax_backward_data",
        "_masked_softmax_backward",
        "_weight_norm_interface_backward",
    ),
    "scan": ("cumsum", "cumprod", "logcumsumexp", "_logcumsumexp", "cummax", "cummin", "_cummax_helper", "_cummin_helper"),
    "selection": ("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "msort", "_unique2", "unique_consecutive", "unique_dim"),
    "indexing": (
        "index",
        "index_put",
        "masked_select",
        "masked_scatter",
        "grid_sampler_2d",
        "grid_sampler_3d",
        "_grid_sampler_2d_cpu_fallback",
        "im2col",
        "col2im",
        "max_unpool2d",
        "max_unpool3d",
        "roll",
        "flip",
        "diag_embed",
        "diag",
        "repeat_interleave",
        "pixel_shuffle",
        "pixel_unshuffle",
        "channel_shuffle",
        "native_channel_shuffle",
        "reflection_pad1d",
        "reflection_pad2d",
        "reflection_pad3d",
        "replication_pad1d",
        "replication_pad2d",
        "replication_pad3d",
        "_pad_circular",
        "take",
        "put",
        "unfold_backward",
        "embedding_dense_backward",
        "max_pool2d_with_indices_backward",
        "max_pool3d_with_indices_backward",
        "upsample_nearest1d",
        "upsample_nearest2d",
        "upsample_nearest3d",
        "_upsample_nearest_exact1d",
        "_upsample_nearest_exact2d",
        "_upsample_nearest_exact3d",
        "upsample_linear1d",
        "upsample_bilinear2d",
        "_upsample_bilinear2d_aa",
        "upsample_bicubic2d",
        "_upsample_bicubic2d_aa",
        "upsample_trilinear3d",
    ),
    "reduction": (
        "histc",
        "histogram",
        "bincount",
        "_histogramdd_from_bin_cts",
        "trace",
        "dist",
        "avg_pool2d",
        "avg_pool3d",
        "max_pool2d_with_indices",
        "max_pool3d_with_indices",
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "_adaptive_avg_pool2d",
        "_adaptive_avg_pool3d",
        "adaptive_avg_pool1d",
        "adaptive_max_pool2d",
        "adaptive_max_pool3d",
        "fractional_max_pool2d",
        "fractional_max_pool3d",
        "_ctc_loss",
        "linalg_vector_norm",
        "norm",
        "logsumexp",
        "aminmax",
        "sum",
        "mean",
        "nansum",
        "prod",
        "amax",
        "amin",
        "max",
        "min",
        "std",
        "var",
        "std_mean",
        "var_mean",
        "all",
        "any",
        "argmax",
        "argmin",
        "count_nonzero",
    ),
}
_KIND_OF: dict[str, str] = {f"aten.{packet}": kind for kind, packets in _KIND_TABLE.items() for packet in packets}
# Kinds an all-integer output does not override (an integer matmul is still a matmul).
_STRUCTURAL = ("convolution", "matmul", "linalg")
# Schema argument names of an integer index into another tensor.
_INDEX_ARGUMENTS = frozenset({"index", "indices", "indexes", "offsets", "grid"})
# aten packets that compute nothing a kernel would (checks, asserts, host reads): left out of a dispatch.
_BOOKKEEPING = frozenset(
    {
        "aten._linalg_check_errors",
        "aten._assert_async",
        "aten._assert_scalar",
        "aten._functional_assert_async",
        "aten._local_scalar_dense",
        "aten.lift_fresh",
        "aten.lift_fresh_copy",
        "aten.lift",
    }
)


def output_kind(outputs: list[torch.Tensor]) -> str:
    """ "float", "int", "bool", or the mix ("float+int" for values and indices)."""
    kinds = {"bool" if t.dtype == torch.bool else ("float" if t.dtype.is_floating_point else "int") for t in outputs}
    return "+".join(sorted(kinds)) or "none"


def selects(outputs: list[torch.Tensor], inputs: list[torch.Tensor]) -> bool:
    """Every float output value is (bitwise) one of the float inputs' values or zero: a selection or permutation."""
    floats = [t for t in outputs if t.dtype.is_floating_point]
    pool = [t.detach().reshape(-1).double() for t in inputs if t.dtype.is_floating_point]
    if not floats or not pool:
        return False
    values = torch.cat([*pool, torch.zeros(1, dtype=torch.float64)])
    return all(bool(torch.isin(t.detach().reshape(-1).double(), values).all()) for t in floats)


def _schema(op: str) -> Any:
    """The schema of an aten overload ("aten.sum.dim_IntList"), or of a packet's first overload; None when unknown."""
    parts = op.split(".")
    if len(parts) < 2 or parts[0] != "aten":
        return None
    packet = getattr(torch.ops.aten, parts[1], None)
    if packet is None:
        return None
    names = [parts[2]] if len(parts) > 2 else list(packet.overloads())
    for name in names:
        overload = getattr(packet, "default" if name == "" else name, None)
        if overload is not None:
            return overload._schema
    return None


def is_compute(op: str) -> bool:
    """Whether a dispatched aten op is compute: not plumbing (views, allocation, copies), not a
    factory (no tensor argument: `arange`, `eye`, `randn`), not bookkeeping (`_linalg_check_errors`)."""
    packet = ".".join(op.split(".")[:2])
    if packet in PLUMBING_OPS or packet in _BOOKKEEPING:
        return False
    schema = _schema(op)
    if schema is None:
        return True
    if not schema.returns:
        return False
    return any("Tensor" in str(argument.type) for argument in schema.arguments)


def _op_kind(op: str, reduces: bool) -> str:
    """An op's kind among float ops: the table's, else its schema's (an integer index argument:
    indexing; a `keepdim` argument, or a `reduction` one on outputs smaller than the inputs:
    reduction), else elementwise."""
    known = _KIND_OF.get(canonical_op(op))
    if known is not None:
        return known
    schema = _schema(op)
    arguments = {argument.name: str(argument.type) for argument in schema.arguments} if schema is not None else {}
    if any(name in _INDEX_ARGUMENTS and "Tensor" in kind for name, kind in arguments.items()):
        return "indexing"
    if "keepdim" in arguments or ("reduction" in arguments and reduces):
        return "reduction"
    return "elementwise"


def _integer(output: str) -> bool:
    return "float" not in output and output not in ("none", "")


def kind_of_op(op: str, output: str = "float", reduces: bool = False) -> str:
    """The kind of a reference that dispatches the one op `op` (module docstring): structured ops
    by the table; outputs all integer or bool: integer; else the op's kind by table or schema, a
    reduction when nothing else says what its smaller output is."""
    known = _KIND_OF.get(canonical_op(op))
    if known in _STRUCTURAL:
        return known
    if _integer(output):
        return "integer"
    kind = _op_kind(op, reduces)
    return "reduction" if kind == "elementwise" and reduces else kind


def op_kind_from_dispatch(ops: Sequence[str], output: str = "float", reduces: bool = False) -> str:
    """The kind of a reference that dispatches `ops` (aten overloads or packets, compute ops only)
    with outputs of `output` kind ("float", "int", "float+int", ...), smaller than its largest
    input when `reduces`: one op's kind_of_op; for several, the most structured of their kinds
    (OP_KINDS order), except that outputs all integer make it integer (below the structured kinds)
    and a fusion that reduces an axis yet writes as much as it reads is a normalisation."""
    ops = [op for op in ops if op]
    if not ops:
        return "unknown"
    if len({canonical_op(op) for op in ops}) == 1:
        return kind_of_op(ops[0], output, reduces)
    kinds = {_op_kind(op, reduces) for op in ops}
    for kind in _STRUCTURAL:
        if kind in kinds:
            return kind
    if _integer(output):
        return "integer"
    if not reduces and kinds & {"normalisation", "reduction"}:
        return "normalisation"
    kinds.discard("normalisation")
    if reduces and kinds <= {"elementwise"}:
        return "reduction"
    return next(kind for kind in OP_KINDS if kind in kinds)


@dataclass(frozen=True)
class Dispatch:
    """What a reference ran (record_dispatch)."""

    # Its compute ops (aten overloads), in order of first dispatch, each once.
    ops: tuple[str, ...]
    # Its outputs' dtypes ("float", "int", "float+int", ...).
    output_kind: str
    # Its outputs hold fewer elements than its largest input.
    reduces: bool
    # Every float output value is one of its float inputs' (a selection: compared bitwise).
    selected: bool
    # FLOPs torch's counter counts (the matmul and convolution families).
    flops: int

    @property
    def family(self) -> str:
        return family_key(self.ops)

    @property
    def kind(self) -> str:
        return op_kind_from_dispatch(self.ops, self.output_kind, self.reduces)


class DispatchRecorder(TorchDispatchMode):
    """Records every compute aten op dispatched inside it (overloads, first dispatch order, each once)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = str(func)
        if name not in self.ops and is_compute(name):
            self.ops.append(name)
        return func(*args, **(kwargs or {}))


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def record_dispatch(run: Callable[[], Any], inputs: Iterable[Any] = ()) -> tuple[Dispatch, Any]:
    """Run `run()` (the reference on its `inputs`: tensors, or nests of them; a module's parameters
    count as its inputs) under a DispatchRecorder and torch's FLOP counter, without autograd;
    what it dispatched, and what it returned."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter, DispatchRecorder() as recorder:
        result = run()
    outputs = _tensors(result)
    tensors = _tensors(list(inputs))
    largest = max((t.numel() for t in tensors), default=0)
    dispatch = Dispatch(
        ops=tuple(recorder.ops),
        output_kind=output_kind(outputs),
        reduces=sum(t.numel() for t in outputs) < largest,
        selected=selects(outputs, tensors),
        flops=int(counter.get_total_flops()),
    )
    return dispatch, result


def problem_dispatch(source: str, sizes: dict[str, int], label: str, seed: int = 0) -> Dispatch:
    """What a KernelBench-format problem's Model.forward dispatches at `sizes` (float32, CPU): its
    inputs and its Model's parameters and buffers are its inputs."""
    from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate

    module = instantiate(source, sizes, label)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
    state = list(model.state_dict().values())
    dispatch, _ = record_dispatch(lambda: model(*inputs), [*inputs, *state])
    return dispatch


@dataclass(frozen=True)
class Measured:
    op_kind: str
    output_kind: str
    aten_ops: int
    flops: int
    # The compute ops the reference dispatched (aten overloads, first dispatch order).
    dispatched: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return family_key(self.dispatched)


_MEASURED: dict[tuple[str, int, str], Measured] = {}


def measure_reference(task: Task) -> Measured:
    """The reference run once at the first public shape (the task's first dtype, the grader's public inputs) under record_dispatch."""
    key = (task.id, task.spec.version, str(task.folder))
    known = _MEASURED.get(key)
    if known is not None:
        return known
    shape = task.spec.shapes.public[0]
    dtype_name = task.spec.dtypes[0]
    inputs = generate_inputs(task, shape, dtype_from_name(dtype_name), public_seed(task.id, dtype_name, "public", 0), torch.device("cpu"))
    # Once unrecorded first: an imported reference builds its Model (weight init, get_inputs) on its first call.
    reference_outputs(task, inputs, shape)
    dispatch, _ = record_dispatch(lambda: reference_outputs(task, inputs, shape)[0], inputs.values())
    measured = Measured(
        op_kind=dispatch.kind,
        output_kind=dispatch.output_kind,
        aten_ops=len(op_sequence(dispatch.ops)),
        flops=dispatch.flops,
        dispatched=dispatch.ops,
    )
    _MEASURED[key] = measured
    return measured


def stored_ops(task: Task) -> list[str]:
    """The dispatched ops the task file records (`[kernelbench] dispatched`; a models task's
    `source_path` names its one op); empty when it records none."""
    source = task.spec.kernelbench
    return stored_dispatch({"kernelbench": source.model_dump()}) if source is not None else []


def task_dispatch(task: Task, measure: bool = True) -> tuple[str, ...]:
    """The compute ops the task's reference dispatches: as recorded, else measured (`measure`), else none known."""
    stored = stored_ops(task)
    if stored or not measure:
        return tuple(stored)
    try:
        return measure_reference(task).dispatched
    except Exception:  # noqa: BLE001 - a reference that does not run is check-tasks' to name
        return ()


def task_family(task: Task, measure: bool = True) -> str:
    """The task's split family (gym.tasks.splits.family_key of its dispatched ops; its name's when they are unknown)."""
    ops = task_dispatch(task, measure)
    return family_key(ops) if ops else family_of(task.id)


def task_kind(task: Task, measure: bool = True) -> str:
    """The task's op kind: as its importer recorded it beside the dispatched ops, else measured,
    else as an older import stored it (guessed from the op's name), else "unknown"."""
    source = task.spec.kernelbench
    if source is not None and source.dispatched and source.op_kind:
        return source.op_kind
    if measure:
        try:
            return measure_reference(task).op_kind
        except Exception:  # noqa: BLE001 - as in task_dispatch
            pass
    return (source.op_kind if source is not None else None) or "unknown"


def measure_family(root: Path, task_id: str) -> tuple[str, str] | None:
    """(family, op kind) of the task folder `root/task_id`, its reference run once if its file
    records no dispatched ops (gym.tasks.splits.record_splits' measure); None when it does not load."""
    from gym.tasks.loader import load_task

    try:
        task = load_task(root / task_id, tasks_root=root)
    except Exception:  # noqa: BLE001 - a broken task keeps its name's family
        return None
    return task_family(task), task_kind(task)


def level_of(task: Task) -> int:
    if task.spec.kernelbench is not None:
        return task.spec.kernelbench.level
    match = re.match(r"l(\d)", task.suite.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else 1


def _bench_cost(task: Task) -> tuple[int | None, int | None]:
    shapes = task.spec.shapes
    bench = shapes.bench[0] if shapes.bench else shapes.public[0]
    source = task.spec.kernelbench
    if source is not None:
        for entry in source.cost:
            if dict(entry.shape) == dict(bench):
                return entry.bytes, entry.flops
        return None, None
    names = {**bench, "itemsize": 4}
    try:
        return int(evaluate(task.spec.min_bytes, names)), int(evaluate(task.spec.min_flops, names))
    except (ValueError, ZeroDivisionError, TypeError):
        return None, None


def task_metadata(task: Task, measure: bool = True) -> TaskMetadata:
    """The task's metadata; `measure=False` leaves unknown (or as an older import stored it) what
    only running the reference would tell."""
    source = task.spec.kernelbench
    outputs, aten_ops = (source.output_kind, source.aten_ops) if source is not None else (None, None)
    if measure and (outputs is None or aten_ops is None):
        try:
            measured: Measured | None = measure_reference(task)
        except Exception:  # noqa: BLE001 - metadata never stops a listing; check-tasks names a broken reference
            measured = None
        if measured is not None:
            outputs, aten_ops = outputs or measured.output_kind, aten_ops if aten_ops is not None else measured.aten_ops
    bench_bytes, bench_flops = _bench_cost(task)
    intensity = bench_flops / bench_bytes if bench_bytes and bench_flops is not None else None
    return TaskMetadata(
        source=source_of(task.id),
        level=level_of(task),
        split=str(task.split),
        family=task_family(task, measure),
        op_kind=task_kind(task, measure),
        output_kind=outputs or "unknown",
        bench_bytes=bench_bytes,
        bench_flops=bench_flops,
        arithmetic_intensity=None if intensity is None or math.isnan(intensity) else round(intensity, 4),
        aten_ops=aten_ops,
    )
