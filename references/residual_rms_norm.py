"""Fused residual add + RMS norm (vLLM's fused_add_rms_norm): two outputs."""

from __future__ import annotations

from typing import Any

import torch


def residual_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    # The new residual stream is one add, rounded in the input dtype; the norm reads that
    # rounded sum, computes in float32 and rounds once.
    new_residual = x + residual
    r = new_residual.to(torch.float32)
    normed = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + eps) * weight.to(torch.float32)
    return normed.to(x.dtype), new_residual


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    eps = 1e-5 if torch.rand(1, generator=generator, device=device).item() < 0.5 else 1e-6
    # Row scales 0.1 .. 10, and the residual stream 4x larger than the layer output, so
    # the add rounds; row 0 is tiny (scale 1e-3, mean square ~1e-5), where eps changes
    # the result by a large factor: eps must be the one passed in.
    scale = 10.0 ** (2.0 * torch.rand(m, 1, generator=generator, device=device) - 1.0)
    scale[0] = 1e-3
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * scale
    residual = 4.0 * torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * scale
    weight = 1.0 + 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    return {"x": x.to(dtype), "residual": residual.to(dtype), "weight": weight.to(dtype), "eps": eps}
