"""Masked mean pooling: the sentence-embedding pooling of a padded batch of hidden states.

out[b] = sum_l hidden[b, l] * mask[b, l] / max(sum_l mask[b, l], 1e-9), in float32 (as
sentence-transformers' mean pooling computes it). A row whose mask is all zero pools to zeros.
"""

from __future__ import annotations

from typing import Any

import torch

# Padded positions hold large finite values, as stale activations in a reused buffer do: a kernel
# that ignores the mask (or divides by the padded length) is far off, and 0 * value stays 0.
PAD_VALUE = 3.0e4


def masked_mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.to(torch.float32).unsqueeze(-1)
    summed = (hidden.to(torch.float32) * weights).sum(dim=1)
    counts = weights.sum(dim=1).clamp(min=1e-9)
    return summed / counts


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    b, length, h = shape["B"], shape["L"], shape["H"]
    lengths = torch.randint(1, length + 1, (b,), generator=generator, device=device)
    if b >= 3:
        lengths[1] = 0  # an all-padding row: pools to zeros, not 0/0
        lengths[2] = length  # a full row: no padding at all
    positions = torch.arange(length, device=device).unsqueeze(0)
    right = positions < lengths.unsqueeze(1)  # right padding (the usual tokenizer layout)
    left = positions >= (length - lengths).unsqueeze(1)  # left padding (decoder batches)
    use_left = torch.rand(b, generator=generator, device=device) < 0.5
    mask = torch.where(use_left.unsqueeze(1), left, right).to(torch.int64)
    # Rows differ in offset and scale, so a pooled value depends on which positions count.
    offsets = torch.randn(b, 1, h, generator=generator, device=device) * 2.0
    hidden = torch.randn(b, length, h, generator=generator, device=device) + offsets
    hidden = torch.where(mask.bool().unsqueeze(-1), hidden, torch.full_like(hidden, PAD_VALUE))
    return {"hidden": hidden.to(dtype), "mask": mask}
