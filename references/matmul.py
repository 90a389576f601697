"""Dense matrix multiply of two 2-D tensors: [M, K] x [K, N] -> [M, N]."""

from __future__ import annotations

from typing import Any

import torch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    # Unit-variance products: entries of a @ b are O(1) whatever K is.
    a = (torch.randn(m, k, generator=generator, device=device, dtype=torch.float32) / k**0.5).to(dtype)
    b = torch.randn(k, n, generator=generator, device=device, dtype=torch.float32).to(dtype)
    return {"a": a, "b": b}
