"""Histogram of integer values: how often each of 0..B-1 occurs (torch.bincount)."""

from __future__ import annotations

from typing import Any

import torch


def histogram(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    return torch.bincount(x, minlength=num_bins)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    n, b = shape["N"], shape["B"]
    # Skewed bin frequencies, as token or expert counts are: about 20% of the bins are
    # never hit (their counts must be exactly 0), the rest follow a heavy-tailed
    # popularity, and one bin takes about a tenth of all values (many updates of one
    # address). The largest value that occurs may be below B-1: the output still has B bins.
    popularity = torch.rand(b, generator=generator, device=device, dtype=torch.float64) ** 4 + 1e-3
    unused = torch.rand(b, generator=generator, device=device) < 0.2
    popularity = torch.where(unused, torch.zeros_like(popularity), popularity)
    hot = int(torch.randint(0, b, (1,), generator=generator, device=device))
    popularity[hot] = 0.1 * float(popularity.sum()) + 1e-3
    x = torch.multinomial(popularity, n, replacement=True, generator=generator)
    return {"x": x.to(dtype), "num_bins": b}
