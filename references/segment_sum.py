"""Jagged (segment) sum: rows of `values` summed per segment, segments given as CSR offsets.

Segment s covers rows offsets[s] .. offsets[s + 1] - 1 of `values`; an empty
segment (offsets[s] == offsets[s + 1]) sums to 0.
"""

from __future__ import annotations

from typing import Any

import torch


def segment_sum(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    num_segments = offsets.numel() - 1
    lengths = offsets[1:] - offsets[:-1]
    segment_ids = torch.repeat_interleave(torch.arange(num_segments, device=values.device), lengths)
    out = values.new_zeros(num_segments, values.shape[1])
    return out.index_add_(0, segment_ids, values)


def oracle(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """The segment sums accumulated in float64, as float64."""
    return segment_sum(values.to(torch.float64), offsets)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    s, d, t = shape["S"], shape["D"], shape["T"]
    # Segment lengths: about 15% of the segments are empty (the last one half the time,
    # so the final offset repeats), one long segment takes about a quarter of the rows
    # (longer than any single block), the rest have heavy-tailed lengths. Lengths sum to T.
    weights = torch.rand(s, generator=generator, device=device, dtype=torch.float64) ** 2 + 1e-3
    empty = torch.rand(s, generator=generator, device=device) < 0.15
    if s > 1 and bool(torch.rand(1, generator=generator, device=device) < 0.5):
        empty[-1] = True
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    long_segment = int(torch.randint(0, s, (1,), generator=generator, device=device))
    weights[long_segment] = float(weights.sum()) / 3.0 + 1e-3
    picks = torch.multinomial(weights, t, replacement=True, generator=generator)
    lengths = torch.bincount(picks, minlength=s)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64, device=device), torch.cumsum(lengths, 0)])
    # Unit noise plus a per-column drift (-0.25..0.25): the long segment's sums reach tens to hundreds.
    drift = 0.5 * torch.rand(1, d, generator=generator, device=device) - 0.25
    values = torch.randn(t, d, generator=generator, device=device, dtype=torch.float32) + drift
    return {"values": values.to(dtype), "offsets": offsets}
