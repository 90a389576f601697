"""A linear layer without bias, weight stored [out_features, in_features]: x @ w.T."""

from __future__ import annotations

from typing import Any

import torch


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.T


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    x = torch.randn(m, k, generator=generator, device=device, dtype=torch.float32).to(dtype)
    w = (torch.randn(n, k, generator=generator, device=device, dtype=torch.float32) / k**0.5).to(dtype)
    return {"x": x, "w": w}
