"""Causal scaled-dot-product attention over [B, H, S, D] tensors, full or with a sliding window."""

from __future__ import annotations

from typing import Any

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    # softmax(q @ k^T * D**-0.5 with keys j > i masked out) @ v, per batch and head.
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    # Query i attends to keys j with i - window < j <= i: itself and the window - 1 before it.
    s = q.shape[-2]
    i = torch.arange(s, device=q.device)[:, None]
    j = torch.arange(s, device=q.device)[None, :]
    allowed = (j <= i) & (j > i - window)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


def _oracle(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int | None) -> torch.Tensor:
    q, k, v = q.to(torch.float64), k.to(torch.float64), v.to(torch.float64)
    s, d = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-1, -2)) * d**-0.5
    i = torch.arange(s, device=q.device)[:, None]
    j = torch.arange(s, device=q.device)[None, :]
    allowed = j <= i
    if window is not None:
        allowed = allowed & (j > i - window)
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def causal_attention_oracle(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The attention computed in float64 throughout, as float64."""
    return _oracle(q, k, v, None)


def sliding_window_attention_oracle(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    """The windowed attention computed in float64 throughout, as float64."""
    return _oracle(q, k, v, window)


def _qkv(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, torch.Tensor]:
    b, h, s, d = shape["B"], shape["H"], shape["S"], shape["D"]

    def randn(*size: int) -> torch.Tensor:
        return torch.randn(*size, generator=generator, device=device, dtype=torch.float32)

    def rand(*size: int) -> torch.Tensor:
        return torch.rand(*size, generator=generator, device=device, dtype=torch.float32)

    # Per-head temperatures from 0.5 to 3: some heads attend almost uniformly, some
    # almost one-hot.
    q = randn(b, h, s, d) * (0.5 + 2.5 * rand(b, h, 1, 1))
    k = randn(b, h, s, d)
    v = randn(b, h, s, d)
    # Every key of a head carries the same large component along one coordinate, and
    # every query a large coefficient on it: a per-query constant is added to all of
    # its scores, of magnitude 40..140 either way (in half the heads, head 0 of batch
    # 0 included). Softmax does not change, but exp() of such scores overflows (or
    # underflows to 0/0) unless the running row maximum is subtracted; a maximum that
    # is not carried (rescaled) correctly from key block to key block is far off too.
    shifted = (torch.arange(b * h, device=device).reshape(b, h, 1) % 2 == 0).to(torch.float32)
    offset = (40.0 + 100.0 * rand(b, h, s)) * torch.where(rand(b, h, s) < 0.5, -1.0, 1.0) * shifted
    column = 8.0
    q[..., 0] = q[..., 0] * (1 - shifted) + offset * d**0.5 / column
    k[..., 0] = k[..., 0] * (1 - shifted) + column * shifted
    return {"q": q.to(dtype), "k": k.to(dtype), "v": v.to(dtype)}


def make_causal_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    return _qkv(shape, dtype, generator, device)


def make_sliding_window_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    return {**_qkv(shape, dtype, generator, device), "window": shape["W"]}
