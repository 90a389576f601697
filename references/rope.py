"""Rotary position embedding (RoPE) of a query/key tensor [T, H, D] with cos/sin tables [T, D/2].

Two pairings of the head dimension, chosen by the `layout` option:

- "half" (GPT-NeoX / Llama): element i is rotated with element i + D/2;
- "interleaved" (GPT-J): element 2i is rotated with element 2i + 1.

Pair i uses angle cos[t, i] / sin[t, i] for token t.
"""

from __future__ import annotations

from typing import Any

import torch


def rope(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "half") -> torch.Tensor:
    # Computed in float32 whatever the input dtype; the result is rounded once.
    qf = q.to(torch.float32)
    c = cos.to(torch.float32)[:, None, :]  # [T, 1, D/2], broadcast over heads
    s = sin.to(torch.float32)[:, None, :]
    half = q.shape[-1] // 2
    if layout == "half":
        x1, x2 = qf[..., :half], qf[..., half:]
        out = torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)
    elif layout == "interleaved":
        x1, x2 = qf[..., 0::2], qf[..., 1::2]
        out = torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).flatten(-2)
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return out.to(q.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, layout: str = "half") -> dict[str, Any]:
    t, h, d = shape["T"], shape["H"], shape["D"]
    q = torch.randn(t, h, d, generator=generator, device=device, dtype=torch.float32)
    # The tables of a real model: angle(t, i) = position_t * 10000^(-2i/D), for the
    # positions of a chunk that starts deep in the sequence (offset 1000..9000), so
    # row 0 is not position 0 (cos 1, sin 0) and every row differs. The high-frequency
    # pairs (small i) turn by many radians; the low-frequency ones barely move.
    start = torch.randint(1000, 9000, (1,), generator=generator, device=device).to(torch.float64)
    positions = start + torch.arange(t, device=device, dtype=torch.float64)
    inv_freq = 10000.0 ** (-torch.arange(0, d, 2, device=device, dtype=torch.float64) / d)
    angles = positions[:, None] * inv_freq[None, :]
    cos = angles.cos().to(torch.float32)
    sin = angles.sin().to(torch.float32)
    return {"q": q.to(dtype), "cos": cos.to(dtype), "sin": sin.to(dtype)}
