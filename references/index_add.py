"""Scatter-add rows: out = base with src[n] added to row index[n] for every n (index_add_ along dim 0)."""

from __future__ import annotations

from typing import Any

import torch


def index_add_rows(base: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    out = base.clone()
    out.index_add_(0, index, src)
    return out


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    n, d, w = shape["N"], shape["D"], shape["W"]
    # About 70% of the destination rows are hit, with heavy-tailed frequencies (some
    # rows receive dozens of source rows, so duplicates must all be summed); the rest
    # must come back as `base` unchanged. Indices are in no particular order. `base`
    # is of the same magnitude as the sums, so dropping it (or returning it) is far off.
    active = torch.randperm(w, generator=generator, device=device)[: max(1, (7 * w) // 10)]
    popularity = torch.rand(active.numel(), generator=generator, device=device, dtype=torch.float64) ** 3 + 0.01
    picks = torch.multinomial(popularity, n, replacement=True, generator=generator)
    index = active[picks].to(torch.int64)
    base = (2.0 * torch.randn(w, d, generator=generator, device=device, dtype=torch.float32)).to(dtype)
    src = torch.randn(n, d, generator=generator, device=device, dtype=torch.float32).to(dtype)
    return {"base": base, "index": index, "src": src}
