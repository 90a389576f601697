"""Per-row float8 (e4m3fn) quantisation: scale = absmax / 448, q = e4m3(x / scale), returned as its bytes.

torch's float8_e4m3fn cast rounds to nearest even; values past 448 are clamped first (as a GPU's
saturating cast does). The codes come back as uint8 bytes (the float8 bit patterns), the way fp8
tensors are usually stored and passed between kernels.
"""

from __future__ import annotations

from typing import Any

import torch

E4M3_MAX = 448.0


def e4m3_values() -> torch.Tensor:
    """Every finite, non-negative e4m3fn value in increasing order (codes 0x00 .. 0x7E), as float32."""
    return torch.arange(0x7F, dtype=torch.int32).to(torch.uint8).view(torch.float8_e4m3fn).to(torch.float32)


def quantize_rowwise_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    amax = xf.abs().amax(dim=-1)
    # An all-zero row gets scale 1.0 (and codes 0), never a division by zero.
    scale = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    q = (xf / scale[:, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q.view(torch.uint8), scale


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Ordinary rows: normal values at per-row scales 1e-2 .. 1e2.
    row_scale = 10.0 ** (4.0 * torch.rand(m, 1, generator=generator, device=device) - 2.0)
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * row_scale
    # Rows 0, 3, 6, ...: the scale is a power of two s = 2^k (k in -6 .. 2), because the row's absmax is
    # 448 s; about half the elements are s times the exact midpoint of two neighbouring e4m3 values, so
    # x / scale is exactly a tie: rounding ties away from zero, truncating, or rounding through float16
    # or bfloat16 first gives another code there (ties between codes 7 and 8, 15 and 16, ... also carry
    # into the exponent). The rest are arbitrary in (-448 s, 448 s).
    values = e4m3_values().to(device)
    k = torch.randint(-6, 3, (m, 1), generator=generator, device=device).to(torch.float32)
    s = 2.0**k
    pick = torch.randint(0, values.numel() - 1, (m, n), generator=generator, device=device)
    ties = (values[pick] + values[pick + 1]) / 2.0
    ties = torch.where(torch.rand(m, n, generator=generator, device=device) < 0.5, -ties, ties) * s
    others = (torch.rand(m, n, generator=generator, device=device) * 2.0 - 1.0) * 440.0 * s
    exact = torch.where(torch.rand(m, n, generator=generator, device=device) < 0.5, ties, others)
    peak = torch.randint(0, n, (m,), generator=generator, device=device)
    sign = torch.where(torch.rand(m, generator=generator, device=device) < 0.5, -1.0, 1.0)
    exact[torch.arange(m, device=device), peak] = sign * E4M3_MAX * s[:, 0]
    tie_rows = (torch.arange(m, device=device) % 3 == 0).unsqueeze(1)
    x = torch.where(tie_rows, exact, x)
    # Row 1 (when M >= 2) is all zeros.
    if m >= 2:
        x[1] = 0.0
    return {"x": x.to(dtype)}
