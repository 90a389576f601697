"""Softmax backward: the input gradient from the forward output y and the output gradient dy."""

from __future__ import annotations

from typing import Any

import torch


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    # In float32 whatever the input dtype (as torch's own softmax backward computes half
    # inputs), rounded once.
    yf, dyf = y.to(torch.float32), dy.to(torch.float32)
    return (yf * (dyf - (dyf * yf).sum(dim=-1, keepdim=True))).to(y.dtype)


def oracle(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """The same gradient computed in float64, as float64 (the reference computes in float32)."""
    yd, dyd = y.to(torch.float64), dy.to(torch.float64)
    return yd * (dyd - (dyd * yd).sum(dim=-1, keepdim=True))


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n = shape["M"], shape["N"]
    # y is a real softmax output: rows range from nearly flat to sharply peaked (logit
    # scales 0.5 .. 8), so some probabilities are ~1 and most are tiny. dy is an upstream
    # gradient with a per-row offset: the offset cancels exactly in the true dx (softmax
    # is shift-invariant), so dropping or mis-masking the row dot product leaves it in.
    scale = 0.5 + 7.5 * torch.rand(m, 1, generator=generator, device=device)
    logits = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) * scale
    y = torch.softmax(logits, dim=-1)
    offset = 2.0 * torch.randn(m, 1, generator=generator, device=device)
    dy = torch.randn(m, n, generator=generator, device=device, dtype=torch.float32) + offset
    return {"y": y.to(dtype), "dy": dy.to(dtype)}
