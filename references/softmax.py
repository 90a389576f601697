"""Row softmax of a 2-D tensor along its last dimension."""

from __future__ import annotations

from typing import Any

import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 3.0
    # Every other row (row 0 included) is spread wider and shifted by 100..160 either
    # way: exp() of such a row overflows (or underflows to 0/0) in float32 and
    # float16 unless the row max is subtracted first.
    scale = 1.0 + 2.0 * torch.rand(m, 1, generator=generator, device=device)
    magnitude = 100.0 + 60.0 * torch.rand(m, 1, generator=generator, device=device)
    sign = torch.where(torch.rand(m, 1, generator=generator, device=device) < 0.5, -1.0, 1.0)
    big = (torch.arange(m, device=device) % 2 == 0).unsqueeze(1)
    x = torch.where(big, x * scale + sign * magnitude, x)
    return {"x": x.to(dtype)}
