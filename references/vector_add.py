"""Elementwise addition of two 1-D tensors."""

from __future__ import annotations

from typing import Any

import torch


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    n = shape["N"]
    x = torch.randn(n, generator=generator, device=device, dtype=torch.float32).to(dtype)
    y = torch.randn(n, generator=generator, device=device, dtype=torch.float32).to(dtype)
    return {"x": x, "y": y}
