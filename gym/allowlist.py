"""Which torch (aten) ops a submission may run: allocation, views, copies, dtype plumbing.

Everything else that dispatches during a call (aten.add, aten.mm, aten._softmax,
...) is computation done by torch instead of the submission's Triton kernels.
A task may allow more packet names in `allowed_torch` (e.g. "aten.arange").
Reading values back to the host (`aten._local_scalar_dense`, i.e. `.item()`)
and building tensors from Python data (`aten.lift_fresh`, `torch.tensor`) are
not plumbing: they are how host-side computation gets back in.
"""

from __future__ import annotations

from collections.abc import Iterable

PLUMBING_OPS: frozenset[str] = frozenset(
    f"aten.{name}"
    for name in (
        # allocation
        "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
        "zeros", "zeros_like", "new_zeros", "ones", "ones_like", "new_ones",
        "full", "full_like", "new_full", "fill_", "zero_", "scalar_tensor",
        # views and layout
        "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "transpose", "permute",
        "unsqueeze", "squeeze", "expand", "as_strided", "slice", "select", "narrow",
        "split", "split_with_sizes", "unbind", "unflatten", "flatten", "view_as_real",
        "view_as_complex", "alias", "detach", "set_",
        # copies and dtype/device plumbing
        "clone", "copy_", "_to_copy", "contiguous",
    )
)


def allowed_ops(task_extra: Iterable[str] = ()) -> frozenset[str]:
    return PLUMBING_OPS | frozenset(task_extra)


# Pseudo-ops the worker's tripwires record, with what they mean.
TRIPWIRES: dict[str, str] = {
    "kgym.dispatch_mode_disabled": "the op trace (a dispatch mode) was popped or disabled",
    "kgym.tensor_data_to_host": "tensor data was handed to the host (numpy(), __array__, tolist, data_ptr, storage) outside a Triton launch",
}


def forbidden(ops: dict[str, int], task_extra: Iterable[str] = ()) -> list[str]:
    """The ops in `ops` that are not plumbing, most frequent first."""
    allowed = allowed_ops(task_extra)
    return sorted((op for op in ops if op not in allowed), key=lambda op: (-ops[op], op))
