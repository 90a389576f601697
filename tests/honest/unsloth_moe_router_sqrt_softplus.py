"""MoE sqrt-softplus router in unsloth's manner: stable softplus (libdevice log1p/exp when compiled for a GPU),
top-k by tl.argmax with a version-gated tie-break, normalised weights.

Style: unsloth
Task: l1/moe_router_sqrt_softplus
Idioms: libdevice math (log1p and exp, behind a torch.cuda.is_available() constexpr), do_not_specialize, packaging version gate on triton.__version__, torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl
from packaging.version import Version
from triton.language.extra import libdevice

# tl.argmax(..., tie_break_left=...) arrived in Triton 2.2; before it, pick the lowest id by hand.
HAS_TIE_BREAK = Version(triton.__version__) >= Version("2.2.0")
USE_LIBDEVICE = torch.cuda.is_available()


@triton.jit
def _softplus(x, USE_LIBDEVICE: tl.constexpr):
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): never overflows.
    if USE_LIBDEVICE:
        return tl.maximum(x, 0.0) + libdevice.log1p(libdevice.exp(-tl.abs(x)))
    else:
        return tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))


@triton.jit(do_not_specialize=["n_tokens"])
def _sqrt_softplus_topk_kernel(
    logits, weights, ids, n_tokens, n_experts, logits_row_stride,
    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
    USE_LIBDEVICE: tl.constexpr, HAS_TIE_BREAK: tl.constexpr,
):
    token = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    expert = tl.arange(0, BLOCK_E)
    slot = tl.arange(0, BLOCK_K)
    mask = (token[:, None] < n_tokens) & (expert[None, :] < n_experts)
    x = tl.load(logits + token[:, None] * logits_row_stride + expert[None, :], mask=mask, other=0.0).to(tl.float32)
    score = tl.sqrt(_softplus(x, USE_LIBDEVICE))
    remaining = tl.where(mask, score, -float("inf"))
    picked = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    picked_id = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int64)
    for k in tl.static_range(TOP_K):
        best = tl.max(remaining, axis=1)
        if HAS_TIE_BREAK:
            best_id = tl.argmax(remaining, axis=1, tie_break_left=True)
        else:
            best_id = tl.min(tl.where(remaining == best[:, None], expert[None, :], BLOCK_E), axis=1)
        picked = tl.where(slot[None, :] == k, best[:, None], picked)
        picked_id = tl.where(slot[None, :] == k, best_id[:, None].to(tl.int64), picked_id)
        remaining = tl.where(expert[None, :] == best_id[:, None], -float("inf"), remaining)
    norm = picked / tl.sum(picked, axis=1)[:, None]
    out_mask = (token[:, None] < n_tokens) & (slot[None, :] < TOP_K)
    tl.store(weights + token[:, None] * TOP_K + slot[None, :], norm, mask=out_mask)
    tl.store(ids + token[:, None] * TOP_K + slot[None, :], picked_id, mask=out_mask)


def sqrt_softplus_route(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    logits = logits.contiguous()
    n_tokens, n_experts = logits.shape
    weights = torch.empty((n_tokens, top_k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((n_tokens, top_k), dtype=torch.int64, device=logits.device)
    BLOCK_T = 16
    _sqrt_softplus_topk_kernel[(triton.cdiv(n_tokens, BLOCK_T),)](
        logits, weights, ids, n_tokens, n_experts, logits.stride(0),
        TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_E=triton.next_power_of_2(n_experts), BLOCK_K=triton.next_power_of_2(top_k),
        USE_LIBDEVICE=USE_LIBDEVICE, HAS_TIE_BREAK=HAS_TIE_BREAK,
    )
    return weights, ids


def kernel(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return sqrt_softplus_route(logits, top_k)
