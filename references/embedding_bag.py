"""EmbeddingBag: gather rows of an embedding table and pool them per bag (sum or mean).

With 1-D `indices` [N] and `offsets` [B], bag b holds indices[offsets[b] : offsets[b + 1]]
(the last bag runs to the end of `indices`). An empty bag pools to zeros in both modes.
"""

from __future__ import annotations

from typing import Any

import torch


def embedding_bag(indices: torch.Tensor, weight: torch.Tensor, offsets: torch.Tensor, mode: str = "sum") -> torch.Tensor:
    return torch.nn.functional.embedding_bag(indices, weight, offsets, mode=mode)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, mode: str = "sum") -> dict[str, Any]:
    b, n, v, d = shape["B"], shape["N"], shape["V"], shape["D"]
    # Bag sizes: heavy-tailed (up to about 3x the mean), about 10% empty, the last bag
    # empty half the time (so the last offset equals N). They sum to N.
    weights = torch.rand(b, generator=generator, device=device, dtype=torch.float64) ** 2 + 1e-3
    empty = torch.rand(b, generator=generator, device=device) < 0.1
    if b > 1 and bool(torch.rand(1, generator=generator, device=device) < 0.5):
        empty[-1] = True
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    if not bool((weights > 0).any()):
        weights[0] = 1.0
    lengths = torch.bincount(torch.multinomial(weights, n, replacement=True, generator=generator), minlength=b)
    offsets = torch.cumsum(lengths, 0) - lengths  # start of each bag
    # Skewed row popularity: some rows are looked up many times, often twice in one bag.
    popularity = torch.rand(v, generator=generator, device=device, dtype=torch.float64) ** 4 + 1e-3
    indices = torch.multinomial(popularity, n, replacement=True, generator=generator)
    weight = torch.randn(v, d, generator=generator, device=device, dtype=torch.float32).to(dtype)
    return {"indices": indices.to(torch.int64), "weight": weight, "offsets": offsets.to(torch.int64)}
