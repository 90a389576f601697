"""The torch policy: which torch a submission may use, in one table.

Everything that says what torch is allowed is derived from `PLUMBING` here:
the runtime op trace's allowed aten packets (`allowed_ops`), the tripwire
pseudo-ops (`TRIPWIRES`), the host-data bridges the runtime watches
(`HOST_BRIDGES`), and the prompt's prose (`prompt_lines`). The static audit
does not judge torch calls at all (a `torch.sum` in a branch that never runs
is no evidence): the op trace judges the calls that ran. A task's
`allowed_torch` names further torch calls (`"arange"` or `"torch.arange"`),
which widen the runtime's allowed packets (`task_ops`).

This module lives in the worker package because the worker's tripwires read
it; it imports nothing and is plain data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Category = Literal["allocation", "view", "copy", "metadata"]


@dataclass(frozen=True)
class Plumbing:
    """One torch call every submission may make."""

    # The name as a submission writes it: torch.<name>(...) and/or tensor.<name>(...).
    name: str
    category: Category
    # aten packets the call dispatches (what the runtime op trace sees); empty for pure metadata.
    aten: tuple[str, ...] = ()
    # Callable as torch.<name>(...) (the audit allows it) ...
    function: bool = True
    # ... and/or as a Tensor method (the audit never sees methods; the runtime does).
    method: bool = True


def _p(name: str, category: Category, *aten: str, function: bool = True, method: bool = True) -> Plumbing:
    return Plumbing(name, category, tuple(f"aten.{op}" for op in (aten or (name,))), function, method)


def _meta(name: str, *aten: str, function: bool = True, method: bool = False) -> Plumbing:
    """A metadata call: reads no data; `aten` names the packets it dispatches, if any."""
    return Plumbing(name, "metadata", tuple(f"aten.{op}" for op in aten), function, method)


PLUMBING: tuple[Plumbing, ...] = (
    # allocation
    _p("empty", "allocation", method=False),
    _p("empty_like", "allocation", method=False),
    _p("empty_strided", "allocation", method=False),
    _p("zeros", "allocation", method=False),
    _p("zeros_like", "allocation", method=False),
    _p("ones", "allocation", method=False),
    _p("ones_like", "allocation", method=False),
    _p("full", "allocation", method=False),
    _p("full_like", "allocation", method=False),
    _p("scalar_tensor", "allocation", method=False),
    _p("new_empty", "allocation", "new_empty", "new_empty_strided", function=False),
    _p("new_empty_strided", "allocation", function=False),
    _p("new_zeros", "allocation", function=False),
    _p("new_ones", "allocation", function=False),
    _p("new_full", "allocation", function=False),
    _p("fill_", "allocation", function=False),
    _p("zero_", "allocation", function=False),
    # views and layout
    _p("view", "view", "view", "_unsafe_view", function=False),
    _p("reshape", "view", "reshape", "view", "_reshape_alias", "_unsafe_view", "clone"),
    _p("t", "view"),
    _p("transpose", "view"),
    _p("permute", "view"),
    _p("unsqueeze", "view"),
    _p("squeeze", "view"),
    _p("expand", "view", function=False),
    _p("as_strided", "view"),
    # indexing (x[a:b], x[i]) dispatches these
    _p("slice", "view", function=False, method=False),
    _p("select", "view"),
    _p("narrow", "view", "narrow", "slice"),
    _p("split", "view", "split", "split_with_sizes", "slice"),
    _p("split_with_sizes", "view"),
    _p("unbind", "view"),
    _p("unflatten", "view", "unflatten", "view"),
    _p("flatten", "view", "flatten", "view", "_reshape_alias", "clone"),
    _p("view_as_real", "view"),
    _p("view_as_complex", "view"),
    _p("alias", "view", function=False, method=False),
    _p("detach", "view"),
    _p("set_", "view", function=False),
    # copies and dtype/device plumbing
    _p("clone", "copy"),
    _p("copy_", "copy", function=False),
    _p("to", "copy", "_to_copy", function=False),
    _p("_to_copy", "copy", function=False),
    _p("contiguous", "copy", "contiguous", "clone", function=False),
    # metadata: no data is read or computed
    _meta("device"),
    _meta("dtype"),
    _meta("Size"),
    _meta("finfo"),
    _meta("iinfo"),
    _meta("is_tensor"),
    _meta("is_floating_point", method=True),
    _meta("is_complex", method=True),
    _meta("get_default_dtype"),
    _meta("promote_types", "promote_types"),
    _meta("result_type", "result_type"),
    _meta("numel", method=True),
    _meta("stride", function=False, method=True),
    _meta("size", function=False, method=True),
    _meta("dim", function=False, method=True),
    _meta("element_size", function=False, method=True),
    _meta("is_contiguous", function=False, method=True),
)


PLUMBING_OPS: frozenset[str] = frozenset(op for entry in PLUMBING for op in entry.aten)


def torch_names(task_extra: Iterable[str]) -> list[str]:
    """A task's `allowed_torch` entries as bare torch names ("torch.arange", "aten.arange" -> "arange")."""
    names = []
    for entry in task_extra:
        name = entry.strip()
        for prefix in ("torch.", "aten.", "Tensor."):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        names.append(name)
    return names


def task_ops(task_extra: Iterable[str]) -> frozenset[str]:
    """The aten packets a task's `allowed_torch` entries dispatch (`arange` -> `aten.arange`)."""
    return frozenset(f"aten.{name}" for name in torch_names(task_extra))


def allowed_ops(task_extra: Iterable[str] = ()) -> frozenset[str]:
    """Every aten packet the runtime op trace accepts for a task (and the host reads it allows)."""
    return PLUMBING_OPS | {HOST_READ_OP} | task_ops(task_extra)


def forbidden(ops: dict[str, int], task_extra: Iterable[str] = ()) -> list[str]:
    """The ops in `ops` that are not allowed, most frequent first."""
    allowed = allowed_ops(task_extra)
    return sorted((op for op in ops if op not in allowed), key=lambda op: (-ops[op], op))


# Pseudo-ops the worker's tripwires record, with what they mean.
DISABLED_OP = "kgym.dispatch_mode_disabled"
HOST_BRIDGE_OP = "kgym.tensor_data_to_host"
HIDDEN_LAUNCH_OP = "kgym.hidden_gpu_launch"
SIDE_STREAM_OP = "kgym.side_stream_launch"
# A host read (`.item()`, `.tolist()`) of an integer or boolean tensor whose buffer an earlier Triton launch of
# the same call was given (a count a kernel computed, sizing a later launch): allowed, at most MAX_HOST_READS
# values per call, and re-derived by the witness from its own buffers. Any other `.item()` stays
# `aten._local_scalar_dense`, which is compute.
HOST_READ_OP = "kgym.host_read"
HOST_READ_PACKET = "aten._local_scalar_dense"
MAX_HOST_READS = 64
TRIPWIRES: dict[str, str] = {
    HIDDEN_LAUNCH_OP: "a GPU kernel was compiled and launched by torch outside the dispatcher (torch.cuda.jiterator)",
    DISABLED_OP: "the op trace (a dispatch mode) was popped or disabled",
    HOST_BRIDGE_OP: "tensor data was handed to the host (numpy(), __array__, tolist, __dlpack__, storage) outside a Triton launch",
    SIDE_STREAM_OP: "a Triton kernel was launched on another CUDA stream or device than the timed one (the timer does not wait for it)",
}

# Tensor attributes that hand raw data to the host or another library without any aten op:
# name -> whether the worker hooks it at run time (a method on torch.Tensor). `data_ptr` is not one:
# an address is not data (pointer-equality checks are honest), and reading memory through it needs
# ctypes or a GPU library, which the audit and the audit hooks refuse.
HOST_BRIDGES: dict[str, bool] = {
    "numpy": True,
    "__array__": True,
    "tolist": True,
    "__dlpack__": True,
    "untyped_storage": True,
    "_typed_storage": True,
    "storage": True,
    "__array_interface__": False,
    "__cuda_array_interface__": False,
    # .item() dispatches aten._local_scalar_dense, which the op trace sees as compute unless it is a
    # host read of a count a kernel wrote (HOST_READ_OP); tolist of such a tensor reads it the same way.
    "item": False,
}
# torch.cuda submodules with no honest use in a kernel file: they compute on the GPU
# (jiterator builds and launches its own kernels) or across GPUs (nccl, comm) without
# any dispatcher op the trace could see. The audit refuses them; the worker trips on the
# pybind entries they reach (`torch._C.<name>`), recorded as HIDDEN_LAUNCH_OP.
FORBIDDEN_CUDA_MODULES: dict[str, str] = {
    "jiterator": "torch.cuda.jiterator (compiles and launches its own GPU kernels, unseen by the op trace)",
    "nccl": "torch.cuda.nccl (collectives on other GPUs)",
    "comm": "torch.cuda.comm (copies and reductions across GPUs)",
}
HIDDEN_LAUNCH_ENTRIES: tuple[str, ...] = ("_cuda_jiterator_compile_and_launch_kernel",)

RUNTIME_HOST_BRIDGES: tuple[str, ...] = tuple(name for name, hooked in HOST_BRIDGES.items() if hooked)


def prompt_lines(task_extra: Iterable[str] = ()) -> list[str]:
    """The policy in plain words, as the agent's prompt shows it."""

    def names(category: Category) -> str:
        shown = []
        for entry in PLUMBING:
            if entry.category != category or entry.name.startswith("_") or not (entry.function or entry.method):
                continue
            forms = (["torch." + entry.name] if entry.function else []) + (["Tensor." + entry.name] if entry.method else [])
            shown.append("/".join(forms))
        return ", ".join(shown)

    lines = [
        f"allocation: {names('allocation')}",
        f"views and layout: {names('view')}",
        f"copies and dtype/device plumbing: {names('copy')} (Tensor.to for dtype/device only)",
        f"metadata: {names('metadata')}",
        f"host reads: Tensor.item/Tensor.tolist of an integer tensor a launch of the same call was given (a count a kernel wrote), "
        f"at most {MAX_HOST_READS} values per call",
    ]
    extra = torch_names(task_extra)
    if extra:
        lines.append("allowed by this task: " + ", ".join(f"torch.{name}" for name in extra))
    return lines
