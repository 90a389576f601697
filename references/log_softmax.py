"""Row log-softmax of a 2-D tensor along its last dimension."""

from __future__ import annotations

from typing import Any

import torch


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(x, dim=-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Logit-like rows: a per-row temperature (0.5..25) and offset (-100..100), so
    # some rows are nearly one-hot and exp() of raw values overflows float32.
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    temperature = 0.5 + 24.5 * torch.rand(m, 1, generator=generator, device=device)
    offset = 200.0 * torch.rand(m, 1, generator=generator, device=device) - 100.0
    return {"x": (x * temperature + offset).to(dtype)}
