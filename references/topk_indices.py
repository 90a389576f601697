"""Top-k indices along the last dimension, with a defined order on ties.

The k selected columns of each row are listed by descending value; equal values
are listed by ascending column index (the lower index first, both for which of
several tied columns make the cut at position k and for their order). That is
the first k entries of a stable sort of the row on -value, i.e. of the row's
columns sorted by the key (-x[i, j], j). torch.topk leaves the order of ties
unspecified, so the reference uses a stable sort instead.
"""

from __future__ import annotations

from typing import Any

import torch


def topk_indices(x: torch.Tensor, k: int) -> torch.Tensor:
    # A stable descending sort keeps equal values in ascending index order.
    order = torch.sort(x, dim=-1, descending=True, stable=True).indices
    return order[:, :k].contiguous()


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    # Each row draws its values from a few exact levels (multiples of 0.25, exact in
    # float16 too), so a row holds many exact ties, often across the k-th position:
    # 1 level (the whole row tied), 2, 3, 5, 16 or 200 levels, or continuous values
    # (which may still tie after rounding to float16). Offsets move rows to negative
    # values and to magnitudes of a few hundred. No NaN, no inf, no -0.0.
    levels = torch.tensor([1, 2, 3, 5, 16, 200, 0], device=device)
    pick = torch.randint(0, levels.numel(), (m,), generator=generator, device=device)
    row_levels = levels[pick].to(torch.float32).unsqueeze(1)
    u = torch.rand(m, n, generator=generator, device=device)
    offset = torch.randint(-400, 400, (m, 1), generator=generator, device=device).to(torch.float32) * 0.25
    quantised = torch.floor(u * row_levels) * 0.25 + offset
    continuous = torch.randn(m, n, generator=generator, device=device) * 3.0 + offset
    x = torch.where(row_levels > 0, quantised, continuous).to(dtype)
    x = torch.where(x == 0, torch.zeros_like(x), x)  # -0.0 -> +0.0
    return {"x": x, "k": k}
