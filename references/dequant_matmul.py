"""Weight-only int8 quantised linear layer: out = x @ (w_q * scale[:, None]).T.

The weight is stored as PyTorch's linear layers store it, [out_features, in_features]
= [N, K], quantised to int8 with one float32 scale per output channel (per row of w_q).
"""

from __future__ import annotations

from typing import Any

import torch


def dequant_matmul(x: torch.Tensor, w_q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    # Dequantise to float32, multiply in float32, cast the result to x's dtype.
    w = w_q.to(torch.float32) * scale[:, None]
    return (x.to(torch.float32) @ w.T).to(x.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    x = torch.randn(m, k, generator=generator, device=device, dtype=torch.float32)
    # Every int8 value, -128 included (a kernel that reads the bytes as unsigned is far off).
    w_q = torch.randint(-128, 128, (n, k), generator=generator, device=device, dtype=torch.int8)
    # Per-channel scales spread 10x (0.32..3.2 over the nominal), so a scale applied along
    # the wrong axis or not at all shows; the nominal 1 / (74 sqrt(K)) keeps outputs O(1)
    # (an int8 value has standard deviation ~74) whatever K is, within float16's range.
    spread = 10.0 ** (torch.rand(n, generator=generator, device=device, dtype=torch.float32) - 0.5)
    scale = spread / (74.0 * k**0.5)
    return {"x": x.to(dtype), "w_q": w_q, "scale": scale}
