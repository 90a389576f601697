"""Mixture-of-experts layer: a router picks top-k experts per token, each expert is a SwiGLU MLP,
and the token's output is the router-weighted sum of its experts' outputs.

`stage(name, value)` returns `value` unchanged: it names the intermediate results of the layer
(`moe_layer_stages` collects them), which a submission may return after its output for diagnosis.
"""

from __future__ import annotations

import contextvars
from typing import Any

import torch

# The intermediate results being collected by `moe_layer_stages` (None: not collecting).
_RECORDING: contextvars.ContextVar[dict[str, torch.Tensor] | None] = contextvars.ContextVar("moe_layer_stages", default=None)


def stage(name: str, value: torch.Tensor) -> torch.Tensor:
    """Names an intermediate result; returns it unchanged."""
    recording = _RECORDING.get()
    if recording is not None:
        recording[name] = value
    return value


def moe_layer(
    x: torch.Tensor,
    w_router: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    top_k: int,
    score: str = "softmax",
) -> torch.Tensor:
    # x [T, Dm]; w_router [Dm, E]; w_gate, w_up [E, Dm, Df]; w_down [E, Df, Dm].
    t, dm = x.shape
    n_experts, _, df = w_gate.shape
    logits = stage("router_logits", x @ w_router)  # [T, E]
    if score == "softmax":  # Mixtral / Qwen-MoE: softmax over all experts, then top-k
        scores = torch.softmax(logits, dim=-1)
    elif score == "sigmoid":  # DeepSeek-V3: independent sigmoid scores
        scores = torch.sigmoid(logits)
    else:
        raise ValueError(f"unknown score {score!r}")
    values, ids = torch.topk(scores, top_k, dim=-1, largest=True, sorted=True)  # [T, K], descending
    weights = stage("router_weights", values / values.sum(dim=-1, keepdim=True))  # renormalised: rows sum to 1
    stage("router_ids", ids)
    # Every (token, slot) pair through its expert: act = silu(x @ w_gate[e]) * (x @ w_up[e]), then @ w_down[e].
    act = x.new_zeros(t, top_k, df)
    expert_out = x.new_zeros(t, top_k, dm)
    for e in range(n_experts):
        token, slot = torch.nonzero(ids == e, as_tuple=True)
        if token.numel() == 0:
            continue
        xe = x[token]  # [n_e, Dm]
        h = torch.nn.functional.silu(xe @ w_gate[e]) * (xe @ w_up[e])  # [n_e, Df]
        act[token, slot] = h
        expert_out[token, slot] = h @ w_down[e]  # [n_e, Dm]
    stage("expert_act", act)  # [T, K, Df]
    stage("expert_out", expert_out)  # [T, K, Dm]
    # Combine: out[t] = sum_k weights[t, k] * expert_out[t, k].
    return (weights[:, :, None] * expert_out).sum(dim=1)


def moe_layer_stages(
    x: torch.Tensor,
    w_router: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    top_k: int,
    score: str = "softmax",
) -> dict[str, torch.Tensor]:
    """The layer's intermediate results, in order: router_logits [T, E], router_weights [T, K],
    router_ids [T, K] (int64), expert_act [T, K, Df], expert_out [T, K, Dm]."""
    recording: dict[str, torch.Tensor] = {}
    token = _RECORDING.set(recording)
    try:
        moe_layer(x, w_router, w_gate, w_up, w_down, top_k, score)
    finally:
        _RECORDING.reset(token)
    return recording


def moe_layer_oracle(
    x: torch.Tensor,
    w_router: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    top_k: int,
    score: str = "softmax",
) -> torch.Tensor:
    """The layer computed in float64 throughout, as float64 (the inputs keep the expert selection
    the same as in float32)."""
    f64 = torch.float64
    return moe_layer(x.to(f64), w_router.to(f64), w_gate.to(f64), w_up.to(f64), w_down.to(f64), top_k, score)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, score: str = "softmax") -> dict[str, Any]:
    t, dm, df, e, k = shape["T"], shape["Dm"], shape["Df"], shape["E"], shape["K"]
    f64 = torch.float64

    def randn(*size: int) -> torch.Tensor:
        return torch.randn(*size, generator=generator, device=device, dtype=f64)

    # The router's logits are chosen first and x is built to produce them. Per token: E distinct
    # logits on a grid with spacing 0.15 (plus jitter of at most +-0.03), shuffled, shifted by a
    # per-token offset; neighbouring logits then differ by >= 0.09, far more than any float32
    # summation order moves them (~1e-6), so every honest kernel selects the same experts in
    # the same order as the float64 oracle.
    spacing = 0.15
    ranks = torch.rand(t, e, generator=generator, device=device).argsort(dim=1).to(f64)
    jitter = (torch.rand(t, e, generator=generator, device=device, dtype=f64) * 2 - 1) * 0.2 * spacing
    offset = randn(t, 1) * 2.0
    logits = (ranks - (e - 1) / 2) * spacing + jitter + offset
    # Router columns: an orthonormal frame (a random rotation's first E columns) scaled by 4, so
    # x = x0 - (x0 Q) Q^T + logits Q^T / 4 gives exactly x @ w_router = logits (E <= Dm), and x
    # keeps a random component orthogonal to the router's.
    q, _ = torch.linalg.qr(randn(dm, e))
    scale = 4.0
    x0 = randn(t, dm)
    x = x0 - (x0 @ q) @ q.T + logits @ q.T / scale
    w_router = (q * scale).contiguous()  # (QR returns Q column-major)
    # Expert weights at the usual 1/sqrt(fan-in) scale: gate pre-activations ~N(0, 1) (silu in its
    # curved range), expert outputs O(1). The experts differ, so a token routed to the wrong
    # expert, or weighted with the wrong router weight, is far off.
    w_gate = randn(e, dm, df) / dm**0.5
    w_up = randn(e, dm, df) / dm**0.5
    w_down = randn(e, df, dm) / df**0.5
    return {
        "x": x.to(dtype),
        "w_router": w_router.to(dtype),
        "w_gate": w_gate.to(dtype),
        "w_up": w_up.to(dtype),
        "w_down": w_down.to(dtype),
        "top_k": k,
    }
