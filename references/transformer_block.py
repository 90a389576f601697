"""A pre-norm decoder block (Llama-style): RMSNorm, causal multi-head self-attention with rotary
position embedding (half-split layout), residual; RMSNorm, SwiGLU MLP, residual.

Weights are stored [in_features, out_features] (a projection is `a @ w`); head h of q, k, v is
columns h * hd .. (h + 1) * hd - 1 of the projection, hd = Dm / n_heads. RMSNorm's eps is 1e-5.

`stage(name, value)` returns `value` unchanged: it names the intermediate results of the block
(`transformer_block_stages` collects them), which a submission may return after its output for
diagnosis.
"""

from __future__ import annotations

import contextvars
from typing import Any

import torch

EPS = 1e-5

# The intermediate results being collected by `transformer_block_stages` (None: not collecting).
_RECORDING: contextvars.ContextVar[dict[str, torch.Tensor] | None] = contextvars.ContextVar("transformer_block_stages", default=None)


def stage(name: str, value: torch.Tensor) -> torch.Tensor:
    """Names an intermediate result; returns it unchanged."""
    recording = _RECORDING.get()
    if recording is not None:
        recording[name] = value
    return value


def transformer_block(
    x: torch.Tensor,
    g1: torch.Tensor,
    wq: torch.Tensor,
    wk: torch.Tensor,
    wv: torch.Tensor,
    wo: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    g2: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    n_heads: int,
) -> torch.Tensor:
    # x [B, S, Dm]; g1, g2 [Dm]; wq, wk, wv, wo [Dm, Dm]; cos, sin [S, hd / 2]; w_gate, w_up [Dm, Df]; w_down [Df, Dm].
    b, s, dm = x.shape
    hd = dm // n_heads
    half = hd // 2
    # Attention half: RMSNorm (scaled by g1), projections split into heads.
    a = stage("attn_norm", x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * g1)
    q = (a @ wq).view(b, s, n_heads, hd)
    k = (a @ wk).view(b, s, n_heads, hd)
    v = (a @ wv).view(b, s, n_heads, hd)
    # RoPE, half-split: element i of a head turns with element i + hd/2 by the angle of (position, i).
    c = cos[None, :, None, :]  # [1, S, 1, hd/2]: row t is position t
    sn = sin[None, :, None, :]
    q = stage("q_rope", torch.cat((q[..., :half] * c - q[..., half:] * sn, q[..., half:] * c + q[..., :half] * sn), dim=-1))
    k = stage("k_rope", torch.cat((k[..., :half] * c - k[..., half:] * sn, k[..., half:] * c + k[..., :half] * sn), dim=-1))
    stage("v", v)
    # Causal attention per head (scale hd**-0.5), heads concatenated back to [B, S, Dm].
    o = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    attn = stage("attn", o.transpose(1, 2).reshape(b, s, dm))
    h = stage("h", x + attn @ wo)
    # MLP half: RMSNorm (scaled by g2), SwiGLU, residual.
    m = stage("mlp_norm", h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS) * g2)
    mlp = stage("mlp", (torch.nn.functional.silu(m @ w_gate) * (m @ w_up)) @ w_down)
    return h + mlp


def transformer_block_stages(
    x: torch.Tensor,
    g1: torch.Tensor,
    wq: torch.Tensor,
    wk: torch.Tensor,
    wv: torch.Tensor,
    wo: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    g2: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    n_heads: int,
) -> dict[str, torch.Tensor]:
    """The block's intermediate results, in order: attn_norm [B, S, Dm], q_rope [B, S, H, hd],
    k_rope [B, S, H, hd], v [B, S, H, hd], attn [B, S, Dm] (before wo), h [B, S, Dm],
    mlp_norm [B, S, Dm], mlp [B, S, Dm] (before the residual)."""
    recording: dict[str, torch.Tensor] = {}
    token = _RECORDING.set(recording)
    try:
        transformer_block(x, g1, wq, wk, wv, wo, cos, sin, g2, w_gate, w_up, w_down, n_heads)
    finally:
        _RECORDING.reset(token)
    return recording


def transformer_block_oracle(
    x: torch.Tensor,
    g1: torch.Tensor,
    wq: torch.Tensor,
    wk: torch.Tensor,
    wv: torch.Tensor,
    wo: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    g2: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    n_heads: int,
) -> torch.Tensor:
    """The block computed in float64 throughout, as float64."""
    f64 = torch.float64
    tensors = [t.to(f64) for t in (x, g1, wq, wk, wv, wo, cos, sin, g2, w_gate, w_up, w_down)]
    return transformer_block(*tensors, n_heads)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    b, s, dm, n_heads, df = shape["B"], shape["S"], shape["Dm"], shape["H"], shape["Df"]
    hd = dm // n_heads
    f64 = torch.float64

    def randn(*size: int) -> torch.Tensor:
        return torch.randn(*size, generator=generator, device=device, dtype=f64)

    def rand(*size: int) -> torch.Tensor:
        return torch.rand(*size, generator=generator, device=device, dtype=f64)

    # Token scales spread over e^-2 .. e^2 (~0.14 to 7.4), so a missing or wrong RMSNorm is far
    # off; the norm gains vary around 1 per channel.
    x = randn(b, s, dm) * torch.exp(rand(b, s, 1) * 4 - 2)
    g1 = 0.5 + rand(dm)
    g2 = 0.5 + rand(dm)
    # Projections at 1/sqrt(fan-in); each head's queries get a temperature of 0.5 to 3, so some
    # heads attend almost uniformly over their causal window and some almost one-hot.
    temperature = (0.5 + 2.5 * rand(n_heads)).repeat_interleave(hd)
    wq = randn(dm, dm) / dm**0.5 * temperature[None, :]
    wk = randn(dm, dm) / dm**0.5
    wv = randn(dm, dm) / dm**0.5
    wo = randn(dm, dm) / dm**0.5
    w_gate = randn(dm, df) / dm**0.5
    w_up = randn(dm, df) / dm**0.5
    w_down = randn(df, dm) / df**0.5
    # The tables of a prefill: angle(t, i) = t * 10000^(-2i / hd) for positions t = 0 .. S-1.
    positions = torch.arange(s, device=device, dtype=f64)
    inv_freq = 10000.0 ** (-torch.arange(0, hd, 2, device=device, dtype=f64) / hd)
    angles = positions[:, None] * inv_freq[None, :]
    values = {
        "x": x,
        "g1": g1,
        "wq": wq,
        "wk": wk,
        "wv": wv,
        "wo": wo,
        "cos": angles.cos(),
        "sin": angles.sin(),
        "g2": g2,
        "w_gate": w_gate,
        "w_up": w_up,
        "w_down": w_down,
    }
    out: dict[str, Any] = {name: value.to(dtype).contiguous() for name, value in values.items()}
    out["n_heads"] = n_heads
    return out
