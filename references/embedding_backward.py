"""Weight gradient of an embedding lookup: scatter-add grad_output rows into their indices."""

from __future__ import annotations

from typing import Any

import torch


def embedding_backward(indices: torch.Tensor, grad_output: torch.Tensor, num_weights: int) -> torch.Tensor:
    grad_weight = torch.zeros(num_weights, grad_output.shape[1], dtype=grad_output.dtype, device=grad_output.device)
    return grad_weight.index_add_(0, indices, grad_output)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    n, d, w = shape["N"], shape["D"], shape["W"]
    # About 70% of the weights are ever looked up, with skewed (some heavy) frequencies.
    active = torch.randperm(w, generator=generator, device=device)[: max(1, (7 * w) // 10)]
    popularity = torch.rand(active.numel(), generator=generator, device=device, dtype=torch.float64) ** 3 + 0.01
    picks = torch.multinomial(popularity, n, replacement=True, generator=generator)
    indices = active[picks].to(torch.int64)
    grad_output = torch.randn(n, d, generator=generator, device=device, dtype=torch.float32).to(dtype)
    return {"indices": indices, "grad_output": grad_output, "num_weights": w}
