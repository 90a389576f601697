"""Stable ascending argsort of each row of a 2-D tensor.

Row i of the result lists the columns of x[i, :] from the smallest value to the
largest; equal values keep their original order (ascending column index), which
is what `stable=True` guarantees.
"""

from __future__ import annotations

from typing import Any

import torch


def argsort_rows(x: torch.Tensor) -> torch.Tensor:
    return torch.argsort(x, dim=-1, stable=True)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Each row draws from a few exact levels (multiples of 0.5, exact in float16), so
    # rows hold long runs of exact ties whose order only a stable sort pins down:
    # 1 level (the whole row tied), 2, 4, 9 or 60 levels, or continuous values (which
    # may still tie after rounding to float16). Per-row offsets make some rows negative
    # and some a few hundred in magnitude. No NaN, no inf, no -0.0.
    levels = torch.tensor([1, 2, 4, 9, 60, 0], device=device)
    pick = torch.randint(0, levels.numel(), (m,), generator=generator, device=device)
    row_levels = levels[pick].to(torch.float32).unsqueeze(1)
    u = torch.rand(m, n, generator=generator, device=device)
    offset = torch.randint(-600, 600, (m, 1), generator=generator, device=device).to(torch.float32) * 0.5
    quantised = torch.floor(u * row_levels) * 0.5 + offset
    continuous = torch.randn(m, n, generator=generator, device=device) * 5.0 + offset
    x = torch.where(row_levels > 0, quantised, continuous).to(dtype)
    x = torch.where(x == 0, torch.zeros_like(x), x)  # -0.0 -> +0.0
    return {"x": x}
