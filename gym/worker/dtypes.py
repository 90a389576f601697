"""Names of the dtypes tasks and the wire format may use."""

from __future__ import annotations

import torch

DTYPES: dict[str, torch.dtype] = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
DTYPE_NAMES: frozenset[str] = frozenset(DTYPES)
NAMES_BY_DTYPE: dict[torch.dtype, str] = {dtype: name for name, dtype in DTYPES.items()}


def dtype_from_name(name: str) -> torch.dtype:
    """The torch dtype called `name`; ValueError for anything else."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}") from None


def dtype_name(dtype: torch.dtype) -> str:
    """The short name of a torch dtype (e.g. "float32")."""
    return NAMES_BY_DTYPE.get(dtype, str(dtype).removeprefix("torch."))


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


_SAME_WIDTH_INT: dict[torch.dtype, torch.dtype] = {
    torch.float64: torch.int64,
    torch.float32: torch.int32,
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
}


def bit_view(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's raw bits as integers (floats reinterpreted, others as they are)."""
    if tensor.dtype in _SAME_WIDTH_INT:
        return tensor.contiguous().view(_SAME_WIDTH_INT[tensor.dtype])
    return tensor


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape and bit pattern (NaN equals NaN with the same payload; -0.0 != +0.0)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bit_view(a), bit_view(b))


def is_dense(tensor: torch.Tensor) -> bool:
    """Every element has its own memory and there are no gaps (any dimension order)."""
    if tensor.numel() == 0:
        return True
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(tensor.stride(), tensor.shape) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True
