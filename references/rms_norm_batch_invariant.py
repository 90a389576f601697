"""RMS normalisation of each row of a batch [M, N] with a per-column weight (every row on its own)."""

from __future__ import annotations

from typing import Any

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # Computed in float32 whatever the input dtype; the result is cast back.
    xf = x.to(torch.float32)
    out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.to(torch.float32)
    return out.to(x.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Rows of hidden states: unit noise, a few large outlier channels shared by all rows
    # (as in real activations), per-row scales from 1e-2 to 1e2 (the output does not
    # depend on them, so a missing normalisation shows) and a weight that is not all ones.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    outliers = torch.randperm(n, generator=generator, device=device)[: max(1, n // 256)]
    x[:, outliers] *= 20.0
    scale = 10.0 ** (4.0 * torch.rand(m, 1, generator=generator, device=device) - 2.0)
    weight = 1.0 + 0.5 * torch.randn(n, generator=generator, device=device, dtype=torch.float32)
    return {"x": (x * scale).to(dtype), "weight": weight.to(dtype)}
