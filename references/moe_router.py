"""Mixture-of-experts router: score every expert, keep the top-k per token, normalise their weights."""

from __future__ import annotations

from typing import Any

import torch


def route(logits: torch.Tensor, top_k: int, score: str = "sigmoid") -> tuple[torch.Tensor, torch.Tensor]:
    if score == "sigmoid":
        scores = torch.sigmoid(logits)
    elif score == "sqrt_softplus":
        scores = torch.sqrt(torch.nn.functional.softplus(logits))
    else:
        raise ValueError(f"unknown score {score!r}")
    values, ids = torch.topk(scores, top_k, dim=-1, largest=True, sorted=True)
    weights = values / values.sum(dim=-1, keepdim=True)
    return weights, ids


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, score: str = "sigmoid") -> dict[str, Any]:
    t, e, k = shape["T"], shape["E"], shape["K"]
    # Per token: E distinct logits on a grid with spacing 0.15 (plus jitter of at most
    # +-0.03), shuffled, shifted by a per-token offset. Neighbouring scores then differ
    # by far more than rounding error, so the selection is unambiguous.
    spacing = 0.15
    ranks = torch.rand(t, e, generator=generator, device=device).argsort(dim=1).to(torch.float32)
    jitter = (torch.rand(t, e, generator=generator, device=device) * 2 - 1) * 0.2 * spacing
    offset = torch.randn(t, 1, generator=generator, device=device)
    logits = (ranks - (e - 1) / 2) * spacing + jitter + offset
    return {"logits": logits.to(dtype), "top_k": k}
