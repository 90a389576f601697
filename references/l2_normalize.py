"""Row-wise L2 normalisation: x / max(||x||_2, eps) along the last dimension."""

from __future__ import annotations

from typing import Any

import torch

EPS = 1e-12


def l2_normalize(x: torch.Tensor) -> torch.Tensor:
    # Computed in float32 whatever the input dtype (in float16, eps = 1e-12 rounds to 0
    # and an all-zero row would give 0 / 0 = NaN); the result is cast back once.
    return torch.nn.functional.normalize(x.to(torch.float32), p=2.0, dim=-1, eps=EPS).to(x.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Row kinds cycle by row index: 0 and 3 normal rows with their own scale (float32
    # 1e-3..1e3, float16 1e-1..1e3, so float16 squares overflow above ~256), 1 all
    # zeros (no eps: 0 / 0 = NaN), 2 tiny rows whose norm lies between 0.1 and 3 x eps,
    # where max(norm, eps) decides the result and rsqrt(sum + eps^2) is off by 5% or
    # more (in float16 these values flush to zero: another all-zero row).
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    low = -3.0 if dtype == torch.float32 else -1.0
    scale = 10.0 ** (low + (3.0 - low) * torch.rand(m, 1, generator=generator, device=device))
    tiny_norm = EPS * 10.0 ** (-1.0 + 1.5 * torch.rand(m, 1, generator=generator, device=device))
    kind = (torch.arange(m, device=device) % 4).unsqueeze(1)
    row_norm = x.norm(dim=-1, keepdim=True)
    x = torch.where(kind == 2, x / row_norm * tiny_norm, x * scale)
    x = torch.where(kind == 1, torch.zeros_like(x), x)
    return {"x": x.to(dtype)}
