"""MoE sigmoid router as an nn.Module: every expert's rank among its token's experts is counted in the kernel,
and the experts ranked below top_k are written to their slot.

Style: Liger-Kernel
Task: l1/moe_router_sigmoid
Idioms: torch.nn Module wrapper whose forward launches the kernel, a parameter called input, functools.lru_cache'd block-size helper
"""

import functools

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def router_blocks(num_experts: int, top_k: int) -> tuple[int, int, int]:
    block_e = triton.next_power_of_2(num_experts)
    block_t = max(1, min(16, 4096 // (block_e * block_e)))
    return block_t, block_e, triton.next_power_of_2(top_k)


@triton.jit
def _rank_router_kernel(
    logits_ptr, weights_ptr, ids_ptr, T, E, stride_t,
    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    e = tl.arange(0, BLOCK_E)
    valid = (t[:, None] < T) & (e[None, :] < E)
    x = tl.load(logits_ptr + t[:, None] * stride_t + e[None, :], mask=valid, other=0.0).to(tl.float32)
    s = tl.sigmoid(x)
    # rank[t, i] = how many valid experts j beat expert i (higher score, or equal score and lower id).
    s_i = s[:, :, None]
    s_j = s[:, None, :]
    beats = (s_j > s_i) | ((s_j == s_i) & (e[None, None, :] < e[None, :, None]))
    beats = beats & (e[None, None, :] < E)
    rank = tl.sum(beats.to(tl.int32), axis=2)
    rank = tl.where(valid, rank, BLOCK_E)  # padding ranks last
    chosen = rank < TOP_K
    total = tl.sum(tl.where(chosen, s, 0.0), axis=1)
    slots = tl.arange(0, BLOCK_K)
    top_s = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    top_i = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int64)
    for k in tl.static_range(TOP_K):
        at_k = rank == k
        top_s = tl.where(slots[None, :] == k, tl.sum(tl.where(at_k, s, 0.0), axis=1)[:, None], top_s)
        top_i = tl.where(slots[None, :] == k, tl.sum(tl.where(at_k, e[None, :], 0), axis=1)[:, None].to(tl.int64), top_i)
    out_mask = (t[:, None] < T) & (slots[None, :] < TOP_K)
    out_offs = t[:, None] * TOP_K + slots[None, :]
    tl.store(weights_ptr + out_offs, top_s / total[:, None], mask=out_mask)
    tl.store(ids_ptr + out_offs, top_i, mask=out_mask)


class LigerSigmoidTopKRouter(torch.nn.Module):
    """Router head: sigmoid scores, top-k experts, weights normalised to sum to 1. No parameters."""

    def forward(self, input: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
        input = input.contiguous()
        T, E = input.shape
        BLOCK_T, BLOCK_E, BLOCK_K = router_blocks(E, top_k)
        weights = torch.empty((T, top_k), dtype=torch.float32, device=input.device)
        ids = torch.empty((T, top_k), dtype=torch.int64, device=input.device)
        _rank_router_kernel[(triton.cdiv(T, BLOCK_T),)](
            input, weights, ids, T, E, input.stride(0), TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_K=BLOCK_K
        )
        return weights, ids


router = LigerSigmoidTopKRouter()


def kernel(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return router(logits, top_k)
