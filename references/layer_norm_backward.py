"""Backward of layer normalisation over the last dimension, with affine weight and bias.

Forward: y = xhat * weight + bias, xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps)
per row (biased variance). Backward, given dy, with g = dy * weight:
dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), dweight = sum over rows of dy * xhat,
dbias = sum over rows of dy.
"""

from __future__ import annotations

from typing import Any

import torch


def layer_norm_backward(x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Computed in float32 whatever the input dtype; the gradients are cast back.
    xf, wf, gf = x.to(torch.float32), weight.to(torch.float32), dy.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    rstd = torch.rsqrt(centered.pow(2).mean(-1, keepdim=True) + eps)
    xhat = centered * rstd
    g = gf * wf
    dx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    dweight = (gf * xhat).sum(0)
    dbias = gf.sum(0)
    return dx.to(x.dtype), dweight.to(weight.dtype), dbias.to(weight.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    eps = 1e-5
    # Rows with their own mean (-20..20) and spread (0.1..10): a one-pass E[x^2] - E[x]^2
    # variance cancels badly on the rows with a large mean. Every fourth row (1, 5, ...)
    # has spread 3e-3 around a mean within +-0.02, so var ~ eps there: ignoring eps shows.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    scale = 10.0 ** (2.0 * torch.rand(m, 1, generator=generator, device=device) - 1.0)
    mean = 40.0 * torch.rand(m, 1, generator=generator, device=device) - 20.0
    tiny = (torch.arange(m, device=device) % 4 == 1).unsqueeze(1)
    scale = torch.where(tiny, torch.full_like(scale, 3e-3), scale)
    mean = torch.where(tiny, mean * 1e-3, mean)
    x = x * scale + mean
    weight = 1.0 + 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    # dy = noise + a component along the normalised output (0.5..1.5 per row) + a per-row
    # offset (0.5..1.5): both projection terms of dx are then O(1), and dweight and dbias
    # sum same-signed terms. dy is scaled like its row of x, so dx (~ rstd * dy) is O(1)
    # on every row and one elementwise tolerance fits them all.
    xhat = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
    align = 0.5 + torch.rand(m, 1, generator=generator, device=device)
    offset = 0.5 + torch.rand(m, 1, generator=generator, device=device)
    dy = (torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) + align * xhat + offset) * scale
    return {"x": x.to(dtype), "weight": weight.to(dtype), "dy": dy.to(dtype), "eps": eps}
