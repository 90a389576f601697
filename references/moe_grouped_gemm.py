"""Grouped GEMM over experts: rows of x already grouped by expert, each group times its own weight.

Group e covers rows offsets[e] .. offsets[e + 1] - 1 of x (CSR offsets, int64 [E + 1]);
out[offsets[e] : offsets[e + 1]] = x[offsets[e] : offsets[e + 1]] @ w[e]. An empty
group contributes no rows.
"""

from __future__ import annotations

from typing import Any

import torch


def moe_grouped_gemm(x: torch.Tensor, offsets: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    out = x.new_empty(x.shape[0], w.shape[2])
    bounds = offsets.tolist()
    for e in range(w.shape[0]):
        start, end = bounds[e], bounds[e + 1]
        out[start:end] = x[start:end] @ w[e]
    return out


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    e, s, k, n = shape["E"], shape["S"], shape["K"], shape["N"]
    # Group sizes as a router's dispatch gives them: about a fifth of the experts get no row
    # (the first or the last one about half the time each, so offsets repeat at an end), one
    # hot expert takes about a third of the rows (several row tiles), the rest heavy-tailed.
    weights = torch.rand(e, generator=generator, device=device, dtype=torch.float64) ** 2 + 1e-3
    empty = torch.rand(e, generator=generator, device=device) < 0.2
    if e > 2:
        end = int(torch.randint(0, 2, (1,), generator=generator, device=device))
        empty[0 if end == 0 else -1] = True
    hot = int(torch.randint(0, e, (1,), generator=generator, device=device))
    empty[hot] = False
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    weights[hot] = float(weights.sum()) / 2.0 + 1e-3
    picks = torch.multinomial(weights, s, replacement=True, generator=generator)
    lengths = torch.bincount(picks, minlength=e)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64, device=device), torch.cumsum(lengths, 0)])
    # Independent weights per expert scaled so outputs are O(1): another expert's weight
    # gives a group an error as large as its output.
    x = torch.randn(s, k, generator=generator, device=device, dtype=torch.float32)
    w = torch.randn(e, k, n, generator=generator, device=device, dtype=torch.float32) / k**0.5
    return {"x": x.to(dtype), "offsets": offsets, "w": w.to(dtype)}
