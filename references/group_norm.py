"""GroupNorm forward over [B, C, L]: normalise each (batch, group of C / G channels) slice, then a per-channel affine."""

from __future__ import annotations

from typing import Any

import torch


def group_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_groups: int) -> torch.Tensor:
    return torch.nn.functional.group_norm(x, num_groups, weight, bias, eps=1e-5)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    b, c, length, g = shape["B"], shape["C"], shape["L"], shape["G"]
    # Every (batch, group) slice gets its own mean (-20..20) and scale (0.1..10): where
    # |mean| / std reaches ~200 a one-pass E[x^2] - E[x]^2 variance cancels badly.
    # Within a group each channel gets a small extra offset, so that a per-channel
    # (instance-norm) statistic is visibly wrong.
    x = torch.randn(b, g, c // g, length, generator=generator, device=device, dtype=torch.float32)
    scale = 10.0 ** (2.0 * torch.rand(b, g, 1, 1, generator=generator, device=device) - 1.0)
    mean = 40.0 * torch.rand(b, g, 1, 1, generator=generator, device=device) - 20.0
    channel = 0.5 * torch.randn(b, g, c // g, 1, generator=generator, device=device)
    x = ((x + channel) * scale + mean).reshape(b, c, length)
    weight = 1.0 + 0.5 * torch.randn(c, generator=generator, device=device, dtype=torch.float32)
    bias = 0.5 * torch.randn(c, generator=generator, device=device, dtype=torch.float32)
    return {"x": x.to(dtype), "weight": weight.to(dtype), "bias": bias.to(dtype), "num_groups": g}
