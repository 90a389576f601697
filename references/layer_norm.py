"""Layer normalisation over the last dimension of a 2-D tensor, with affine weight and bias."""

from __future__ import annotations

from typing import Any

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Rows with their own mean (-20..20) and scale (0.1..10): a one-pass
    # E[x^2] - E[x]^2 variance cancels badly on the rows with a large mean.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    scale = 10.0 ** (2.0 * torch.rand(m, 1, generator=generator, device=device) - 1.0)
    mean = 40.0 * torch.rand(m, 1, generator=generator, device=device) - 20.0
    x = x * scale + mean
    weight = 1.0 + 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    bias = 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    return {"x": x.to(dtype), "weight": weight.to(dtype), "bias": bias.to(dtype)}
