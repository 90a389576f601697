"""Int4 weight dequantisation with per-group scales and zero points (GPTQ/AWQ-style storage).

`packed` uint8 [N, K // 2] holds two 4-bit codes per byte: column 2j in the low nibble of byte j,
column 2j + 1 in the high nibble. `scales` [N, K // G] (the output dtype) and `zeros` uint8
[N, K // G] (codes 0..15) belong to groups of G consecutive columns. The weight is

    w[n, k] = ((code[n, k] - zeros[n, k // G]) as float32 * scales[n, k // G] as float32), cast to scales' dtype

Every step but the last product is exact, and the product is rounded once: bitwise is fair.
"""

from __future__ import annotations

from typing import Any

import torch


def unpack(packed: torch.Tensor) -> torch.Tensor:
    """The 4-bit codes [N, K] of packed [N, K // 2] (low nibble first), as int32."""
    as_int = packed.to(torch.int32)
    return torch.stack([as_int & 0xF, as_int >> 4], dim=-1).reshape(packed.shape[0], -1)


def int4_dequant(packed: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    codes = unpack(packed)
    group = codes.shape[1] // scales.shape[1]
    zero = zeros.to(torch.int32).repeat_interleave(group, dim=1)
    scale = scales.to(torch.float32).repeat_interleave(group, dim=1)
    return ((codes - zero).to(torch.float32) * scale).to(scales.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    n, k, g = shape["N"], shape["K"], shape["G"]
    if k % g or k % 2:
        raise ValueError(f"K ({k}) must be even and a multiple of G ({g})")
    # Every byte value occurs (both nibbles 0..15), so swapped nibbles or a sign-extended high
    # nibble change many values.
    packed = torch.randint(0, 256, (n, k // 2), generator=generator, device=device, dtype=torch.int32).to(torch.uint8)
    groups = k // g
    zeros = torch.randint(0, 16, (n, groups), generator=generator, device=device, dtype=torch.int32).to(torch.uint8)
    # Scales vary by orders of magnitude between groups, so using the wrong group's scale (or the
    # row's first) is visible; a few are negative, as GPTQ's can be after act-order reordering.
    magnitude = torch.exp(torch.randn(n, groups, generator=generator, device=device) * 1.5) * 1e-2
    sign = torch.where(torch.rand(n, groups, generator=generator, device=device) < 0.1, -1.0, 1.0)
    scales = (magnitude * sign).to(dtype)
    return {"packed": packed, "scales": scales, "zeros": zeros}
