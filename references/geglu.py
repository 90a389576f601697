"""GEGLU gating: gelu(gate) * up, elementwise, with the exact (erf) GELU."""

from __future__ import annotations

from typing import Any

import torch


def geglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    # torch's default GELU is the exact one: gate * 0.5 * (1 + erf(gate / sqrt(2))).
    return torch.nn.functional.gelu(gate) * up


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Gate pre-activations spread wide (std 3): many land in -4 < g < -1, where the
    # tanh approximation of GELU is off by up to ~10% relative (about 4e-4 absolute),
    # and many are saturated either way. Up projections are unit-scale.
    gate = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 3.0
    up = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    return {"gate": gate.to(dtype), "up": up.to(dtype)}
