"""Per-row symmetric int8 quantisation: scale = absmax / 127, q = round-half-to-even(x / scale)."""

from __future__ import annotations

from typing import Any

import torch


def quantize_rowwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    amax = xf.abs().amax(dim=-1)
    # An all-zero row gets scale 1.0 (and q = 0), never a division by zero.
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    # torch.round rounds halves to even: 2.5 -> 2, -3.5 -> -4.
    q = torch.round(xf / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q, scale


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Ordinary rows: normal values at per-row scales 1e-2 .. 1e2.
    row_scale = 10.0 ** (4.0 * torch.rand(m, 1, generator=generator, device=device) - 2.0)
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * row_scale
    # Rows 0, 3, 6, ...: the scale is a power of two s = 2^k (k in -6 .. 2), because the row's
    # absmax is 127 s, and about half the elements are (j + 1/2) s for integers j in -127 .. 126,
    # so x / scale is exactly a half-integer: rounding half away from zero (or adding 0.5 and
    # truncating) gives a different q there. The other elements are arbitrary in (-127 s, 127 s).
    k = torch.randint(-6, 3, (m, 1), generator=generator, device=device).to(torch.float32)
    s = 2.0**k
    halves = (torch.randint(-127, 127, (m, n), generator=generator, device=device).to(torch.float32) + 0.5) * s
    others = (torch.rand(m, n, generator=generator, device=device) * 2.0 - 1.0) * 126.0 * s
    exact = torch.where(torch.rand(m, n, generator=generator, device=device) < 0.5, halves, others)
    peak = torch.randint(0, n, (m,), generator=generator, device=device)
    sign = torch.where(torch.rand(m, generator=generator, device=device) < 0.5, -1.0, 1.0)
    exact[torch.arange(m, device=device), peak] = sign * 127.0 * s[:, 0]
    half_rows = (torch.arange(m, device=device) % 3 == 0).unsqueeze(1)
    x = torch.where(half_rows, exact, x)
    # Row 1 (when M >= 2) is all zeros.
    if m >= 2:
        x[1] = 0.0
    return {"x": x.to(dtype)}
