"""Inverted dropout with the randomness supplied: keep where u >= p, scale the kept values by 1 / (1 - p)."""

from __future__ import annotations

from typing import Any

import torch

P_CHOICES = (0.1, 0.15, 0.2, 0.5)


def dropout(x: torch.Tensor, u: torch.Tensor, p: float) -> torch.Tensor:
    # p is compared in float32; the scale is 1 / (1 - p) computed in double precision
    # (Python floats) and rounded once to float32, as a float argument reaches a kernel.
    p32 = torch.tensor(p, dtype=torch.float32, device=u.device)
    scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32, device=x.device)
    keep = (u >= p32).to(torch.float32)
    # float32 products; dropped elements are x * 0 (-0.0 where x < 0); rounded once to x's dtype.
    return (x.to(torch.float32) * keep * scale).to(x.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    p = P_CHOICES[int(torch.randint(len(P_CHOICES), (1,), generator=generator, device=device).item())]
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 4.0
    u = torch.rand(m, n, generator=generator, device=device, dtype=torch.float32)
    # About 4% of the draws are exactly float32(p) (kept: u >= p, so `u > p` fails),
    # 2% the float32 just below it (dropped) and 2% the one just above (kept).
    p32 = torch.tensor(p, dtype=torch.float32, device=device)
    r = torch.rand(m, n, generator=generator, device=device)
    u = torch.where(r < 0.04, p32, u)
    u = torch.where((r >= 0.04) & (r < 0.06), torch.nextafter(p32, torch.zeros_like(p32)), u)
    u = torch.where((r >= 0.06) & (r < 0.08), torch.nextafter(p32, torch.ones_like(p32)), u)
    # Element 0 is always a tie, so even the smallest shape has one.
    u.view(-1)[0] = p32
    return {"x": x.to(dtype), "u": u, "p": p}
