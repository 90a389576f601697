"""Row logsumexp of a 2-D tensor: log(sum(exp(x), -1)), computed stably."""

from __future__ import annotations

from typing import Any

import torch


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(x, dim=-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 3.0
    # Every other row (row 0 included) is spread wider and shifted by 100..160 either way:
    # exp() overflows (float32 above ~88, float16 above ~11) or underflows every element
    # to 0 (log(0) = -inf) unless the row max is subtracted first.
    scale = 1.0 + 2.0 * torch.rand(m, 1, generator=generator, device=device)
    magnitude = 100.0 + 60.0 * torch.rand(m, 1, generator=generator, device=device)
    sign = torch.where(torch.rand(m, 1, generator=generator, device=device) < 0.5, -1.0, 1.0)
    big = (torch.arange(m, device=device) % 2 == 0).unsqueeze(1)
    x = torch.where(big, x * scale + sign * magnitude, x)
    # Masked logits: about 1 in 8 entries of rows 2, 5, 8, ... are -inf (they add nothing),
    # and when M >= 3 row 1 is entirely -inf, whose logsumexp is -inf (not NaN).
    rows = torch.arange(m, device=device).unsqueeze(1)
    masked = (rows % 3 == 2) & (torch.rand(m, n, generator=generator, device=device) < 0.125)
    if m >= 3:
        masked = masked | (rows == 1)
    x = torch.where(masked, float("-inf"), x)
    return {"x": x.to(dtype)}
