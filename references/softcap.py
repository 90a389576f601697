"""Logit soft-capping (Gemma 2): cap * tanh(x / cap), elementwise."""

from __future__ import annotations

from typing import Any

import torch


def softcap(x: torch.Tensor, cap: float) -> torch.Tensor:
    return cap * torch.tanh(x / cap)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # Gemma 2 caps attention logits at 50 and final logits at 30.
    cap = 30.0 if torch.rand(1, generator=generator, device=device).item() < 0.5 else 50.0
    # Every element gets its own magnitude, log-uniform over 1e-3 .. 3e3 (float16: 1e-2 .. 3e3,
    # so that fewer quotients x / cap are float16 subnormals) times a normal draw: |x| reaches ~1.5e4, where exp(2 x / cap)
    # overflows float32 (x / cap > 44), so (e^2y - 1) / (e^2y + 1) gives inf / inf = NaN; and
    # tiny |x|, where the output is ~x and a formula like 1 - 2 / (e^2y + 1) cancels to 0.
    low = -3.0 if dtype == torch.float32 else -2.0
    exponent = low + (3.5 - low) * torch.rand(m, n, generator=generator, device=device)
    x = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * 10.0**exponent
    return {"x": x.to(dtype), "cap": cap}
