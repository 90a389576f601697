"""Sum of each row of a 2-D tensor."""

from __future__ import annotations

from typing import Any

import torch


def row_sum(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Rows with their own offset (-1..1) on unit noise: row sums differ in size and sign.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    offset = 2.0 * torch.rand(m, 1, generator=generator, device=device) - 1.0
    return {"x": (x + offset).to(dtype)}
