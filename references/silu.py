"""SiLU (swish) activation, elementwise."""

from __future__ import annotations

from typing import Any

import torch


def silu(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(x)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Wide range (|x| up to ~40): large negative x, where silu(x) = x * exp(x) is
    # tiny but far from zero in ULPs, and large positive x, where silu(x) ~ x.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 8.0
    return {"x": x.to(dtype)}
