"""SwiGLU gating: silu(gate) * up, elementwise."""

from __future__ import annotations

from typing import Any

import torch


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(gate) * up


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Gate pre-activations spread wide (std 4: saturated both ways), up projections unit-scale.
    gate = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 4.0
    up = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    return {"gate": gate.to(dtype), "up": up.to(dtype)}
