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
