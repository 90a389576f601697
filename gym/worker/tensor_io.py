"""Tensors as raw files plus a `TensorFile` description, read back defensively.

No pickle crosses the boundary: a tensor is its dtype, shape and raw bytes.
Reading checks the name, the dtype, the shape against the byte count and the
file size before anything is allocated.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from .dtypes import dtype_from_name, dtype_name
from .protocol import TensorFile

MAX_TENSOR_BYTES = 1 << 30


class TensorReadError(Exception):
    """A tensor file that does not match its description."""


def write_tensor(folder: Path, file: str, tensor: torch.Tensor) -> TensorFile:
    data = tensor.detach().to("cpu").contiguous()
    raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
    (folder / file).write_bytes(raw)
    return TensorFile(file=file, dtype=dtype_name(data.dtype), shape=list(data.shape), nbytes=len(raw))


def read_tensor(folder: Path, meta: TensorFile, max_bytes: int = MAX_TENSOR_BYTES) -> torch.Tensor:
    """The tensor `meta` describes, after checking every claim it makes."""
    try:
        dtype = dtype_from_name(meta.dtype)
    except ValueError as error:
        raise TensorReadError(str(error)) from None
    if any(size < 0 for size in meta.shape) or len(meta.shape) > 16:
        raise TensorReadError(f"{meta.file}: invalid shape {meta.shape}")
    itemsize = torch.empty((), dtype=dtype).element_size()
    expected_bytes = math.prod(meta.shape) * itemsize
    if expected_bytes != meta.nbytes:
        raise TensorReadError(f"{meta.file}: shape {meta.shape} of {meta.dtype} needs {expected_bytes} bytes, described as {meta.nbytes}")
    if meta.nbytes > max_bytes:
        raise TensorReadError(f"{meta.file}: {meta.nbytes} bytes exceeds the limit of {max_bytes}")
    path = folder / meta.file
    if path.is_symlink() or not path.is_file():
        raise TensorReadError(f"{meta.file}: missing or not a regular file")
    if path.stat().st_size != meta.nbytes:
        raise TensorReadError(f"{meta.file}: file holds {path.stat().st_size} bytes, described as {meta.nbytes}")
    if meta.nbytes == 0:
        return torch.empty(meta.shape, dtype=dtype)
    raw = bytearray(path.read_bytes())
    return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(meta.shape).clone()
