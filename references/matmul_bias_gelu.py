"""Fused linear layer with a tanh-approximated GELU: gelu(a @ b + bias)."""

from __future__ import annotations

from typing import Any

import torch


def matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(a @ b + bias, approximate="tanh")


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    # Pre-activations of order 1, so both the curved part of GELU and its tails are exercised.
    a = (torch.randn(m, k, generator=generator, device=device, dtype=torch.float32) / k**0.5).to(dtype)
    b = torch.randn(k, n, generator=generator, device=device, dtype=torch.float32).to(dtype)
    bias = (0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)).to(dtype)
    return {"a": a, "b": b, "bias": bias}
