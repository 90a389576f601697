"""MoE sigmoid router in FlagGems' style: scores, then top-k by repeated arg-max over the still-open experts,
then normalised weights, all in one kernel over a tile of tokens.

Style: FlagGems
Task: l1/moe_router_sigmoid
Idioms: locals named like builtins (open), triton.heuristics, getattr(torch, device.type)
"""

import contextlib
import logging

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


@triton.heuristics(
    values={
        "BLOCK_E": lambda args: triton.next_power_of_2(args["E"]),
        "BLOCK_K": lambda args: triton.next_power_of_2(args["TOP_K"]),
        "BLOCK_T": lambda args: 16,
    }
)
@triton.jit
def sigmoid_topk_router_kernel(
    logits_ptr, weights_ptr, ids_ptr, T, E, stride_lt,
    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    experts = tl.arange(0, BLOCK_E)
    slots = tl.arange(0, BLOCK_K)
    valid = (tokens[:, None] < T) & (experts[None, :] < E)
    logits = tl.load(logits_ptr + tokens[:, None] * stride_lt + experts[None, :], mask=valid, other=0.0).to(tl.float32)
    scores = tl.sigmoid(logits)
    # Experts still open for selection; padding is never open.
    open = tl.where(valid, scores, -float("inf"))
    top_scores = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    top_ids = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int64)
    for k in tl.static_range(TOP_K):
        best = tl.max(open, axis=1)
        # On exact ties the lowest expert id wins, as in torch.topk.
        best_id = tl.min(tl.where(open == best[:, None], experts[None, :], BLOCK_E), axis=1)
        top_scores = tl.where(slots[None, :] == k, best[:, None], top_scores)
        top_ids = tl.where(slots[None, :] == k, best_id[:, None].to(tl.int64), top_ids)
        open = tl.where(experts[None, :] == best_id[:, None], -float("inf"), open)
    weights = top_scores / tl.sum(top_scores, axis=1)[:, None]
    out_mask = (tokens[:, None] < T) & (slots[None, :] < TOP_K)
    out_offsets = tokens[:, None] * TOP_K + slots[None, :]
    tl.store(weights_ptr + out_offsets, weights, mask=out_mask)
    tl.store(ids_ptr + out_offsets, top_ids, mask=out_mask)


def sigmoid_topk_route(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    logger.debug("GEMS MOE SIGMOID ROUTER")
    logits = logits.contiguous()
    T, E = logits.shape
    weights = torch.empty((T, top_k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((T, top_k), dtype=torch.int64, device=logits.device)
    grid = lambda meta: (triton.cdiv(T, meta["BLOCK_T"]),)
    torch_device_fn = getattr(torch, logits.device.type)
    with torch_device_fn.device(logits.device) if logits.is_cuda else contextlib.nullcontext():
        sigmoid_topk_router_kernel[grid](logits, weights, ids, T, E, logits.stride(0), TOP_K=top_k)
    return weights, ids


def kernel(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return sigmoid_topk_route(logits, top_k)
