"""Backward of RMS normalisation over the last dimension, with a per-column weight.

Forward: y = x * rstd * weight, rstd = rsqrt(mean(x^2) + eps) per row.
Backward, given dy: dx = rstd * (dy*w - xhat * mean(dy*w*xhat)) with xhat = x * rstd,
and dweight = sum over rows of dy * xhat.
"""

from __future__ import annotations

from typing import Any

import torch


def rms_norm_backward(x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    # Computed in float32 whatever the input dtype; the gradients are cast back.
    xf, wf, gf = x.to(torch.float32), weight.to(torch.float32), dy.to(torch.float32)
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    xhat = xf * rstd
    gw = gf * wf
    dx = rstd * (gw - xhat * (gw * xhat).mean(-1, keepdim=True))
    dweight = (gf * xhat).sum(0)
    return dx.to(x.dtype), dweight.to(weight.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    eps = 1e-5
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    # Per-row scales from 0.1 to 10 (dx scales with 1/rms, so a missing rstd shows), and
    # every fourth row (row 1, 5, ...) at rms ~3e-3, where mean(x^2) ~ eps: ignoring eps shows.
    scale = 10.0 ** (2.0 * torch.rand(m, 1, generator=generator, device=device) - 1.0)
    tiny = (torch.arange(m, device=device) % 4 == 1).unsqueeze(1)
    scale = torch.where(tiny, torch.full_like(scale, 3e-3), scale)
    x = x * scale
    weight = 1.0 + 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    # dy has a component along the normalised output (0.5..1.5 per row), as real gradients
    # do: dropping the projection term of dx is then an O(1) error, not a 1/sqrt(N) one, and
    # dweight sums same-signed terms (it grows like M), so its relative check is meaningful.
    # dy is scaled like its row of x, so dx (~ rstd * dy) is O(1) on every row and one
    # elementwise tolerance fits them all.
    xhat = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    align = 0.5 + torch.rand(m, 1, generator=generator, device=device)
    dy = (torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) + align * xhat) * scale
    return {"x": x.to(dtype), "weight": weight.to(dtype), "dy": dy.to(dtype), "eps": eps}
