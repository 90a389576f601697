"""Backward of SwiGLU gating, out = silu(gate) * up, elementwise.

With s = sigmoid(gate): d_up = grad_out * gate * s (= grad_out * silu(gate)) and
d_gate = grad_out * up * s * (1 + gate * (1 - s)) (silu'(g) = s * (1 + g * (1 - s))).
"""

from __future__ import annotations

from typing import Any

import torch


def swiglu_backward(grad_out: torch.Tensor, gate: torch.Tensor, up: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # Computed in float32 whatever the input dtype (as autograd's silu_backward does
    # for half inputs); the gradients are cast back to the input dtype.
    dy, g, u = grad_out.to(torch.float32), gate.to(torch.float32), up.to(torch.float32)
    s = torch.sigmoid(g)
    d_up = dy * (g * s)
    d_gate = dy * u * (s * (1.0 + g * (1.0 - s)))
    return d_gate.to(gate.dtype), d_up.to(up.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Gate pre-activations mostly N(0, 4^2) (both saturated sides and the zero of silu'
    # near -1.28), and one element in 16 uniform in [-100, 100]: there exp(|g|) overflows
    # float32 (above ~88.7), so sigmoid written as exp(g) / (1 + exp(g)) gives
    # inf / inf = NaN, and in float16 arithmetic exp overflows already above ~11.
    gate = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 4.0
    wide = torch.rand(m, n, generator=generator, device=device) < 1 / 16
    gate = torch.where(wide, 200.0 * torch.rand(m, n, generator=generator, device=device) - 100.0, gate)
    up = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    grad_out = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32)
    return {"grad_out": grad_out.to(dtype), "gate": gate.to(dtype), "up": up.to(dtype)}
