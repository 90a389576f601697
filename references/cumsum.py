"""Inclusive prefix sum along the last dimension of a 2-D tensor."""

from __future__ import annotations

from typing import Any

import torch


def cumsum(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x, dim=-1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    """The exact-as-float64 prefix sum, as float64."""
    return torch.cumsum(x.to(torch.float64), dim=-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Unit noise plus a per-row drift (-0.5..0.5): prefix sums wander and grow to
    # hundreds or thousands, so rounding accumulates along the row.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    drift = torch.rand(m, 1, generator=generator, device=device) - 0.5
    return {"x": (x + drift).to(dtype)}
