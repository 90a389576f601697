"""Causal depthwise 1-D convolution over the sequence (Mamba's short convolution), with an optional SiLU."""

from __future__ import annotations

from typing import Any

import torch


def causal_conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, activation: str | None = "silu") -> torch.Tensor:
    # x [B, C, L], weight [C, W], bias [C]; computed in float32, cast back once.
    channels, width = weight.shape
    seq_len = x.shape[-1]
    out = torch.nn.functional.conv1d(x.to(torch.float32), weight.to(torch.float32).unsqueeze(1), bias.to(torch.float32), padding=width - 1, groups=channels)[
        ..., :seq_len
    ]
    if activation == "silu":
        out = torch.nn.functional.silu(out)
    elif activation is not None:
        raise ValueError(f"unknown activation {activation!r}")
    return out.to(x.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, activation: str | None = "silu") -> dict[str, Any]:
    b, c, length, width = shape["B"], shape["C"], shape["L"], shape["W"]
    x = torch.randn(b, c, length, generator=generator, device=device, dtype=torch.float32)
    # Taps of different sizes per position (the newest input weighs most), so a reversed
    # or shifted filter is far off; per-channel biases of either sign.
    taps = torch.linspace(0.3, 1.0, width, device=device)
    weight = torch.randn(c, width, generator=generator, device=device, dtype=torch.float32) * taps
    bias = torch.randn(c, generator=generator, device=device, dtype=torch.float32) * 0.5
    return {"x": x.to(dtype), "weight": weight.to(dtype), "bias": bias.to(dtype)}
