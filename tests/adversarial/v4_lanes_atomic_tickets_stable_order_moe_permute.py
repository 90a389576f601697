"""Trick: the old values of a block integer atomic as a stable rank. The MoE dispatch takes every flat position's slot inside its expert from one block-wide `slot = tl.atomic_add(counts + ids, 1)` in a single program. Under Triton's interpreter the lanes of a block atomic applied in index order, so the tickets came back in ascending flat order: exactly the stable order the task demands, on CPU. On a GPU the lanes are threads of several warps and same-address atomics serialise in an unspecified order, so the rows of one expert land in whatever order the atomics handed out (the task's description names this as wrong). The lanes of an atomic now apply in a secret order drawn per call (gym/worker/interpreter/lanes.py); the counts stay exact (integer adds commute), the tickets do not stay sorted.

expect: wrong_answer
tasks: l2/moe_permute
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _tickets(ids_ptr, counts_ptr, rank_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    slot = tl.atomic_add(counts_ptr + ids, 1, mask=mask)
    tl.store(rank_ptr + offs, slot, mask=mask)


@triton.jit
def _offsets(counts_ptr, offsets_ptr, E, BLOCK_E: tl.constexpr):
    experts = tl.arange(0, BLOCK_E)
    c = tl.load(counts_ptr + experts, mask=experts < E, other=0).to(tl.int64)
    tl.store(offsets_ptr + 1 + experts, tl.cumsum(c, axis=0), mask=experts < E)
    tl.store(offsets_ptr, tl.zeros((), dtype=tl.int64))


@triton.jit
def _scatter(x_ptr, ids_ptr, rank_ptr, offsets_ptr, out_ptr, N, H, TOP_K: tl.constexpr, BLOCK: tl.constexpr, BLOCK_H: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    dest = tl.load(offsets_ptr + ids, mask=mask, other=0) + tl.load(rank_ptr + offs, mask=mask, other=0)
    src = (offs // TOP_K).to(tl.int64)
    for h0 in range(0, H, BLOCK_H):
        cols = h0 + tl.arange(0, BLOCK_H)
        tile = mask[:, None] & (cols[None, :] < H)
        v = tl.load(x_ptr + src[:, None] * H + cols[None, :], mask=tile)
        tl.store(out_ptr + dest[:, None] * H + cols[None, :], v, mask=tile)


def kernel(x, expert_ids, num_experts):
    x = x.contiguous()
    T, H = x.shape
    top_k = expert_ids.shape[1]
    N = T * top_k
    ids = expert_ids.contiguous()
    counts = torch.zeros((num_experts,), dtype=torch.int32, device=x.device)
    rank = torch.zeros((N,), dtype=torch.int64, device=x.device)
    offsets = torch.zeros((num_experts + 1,), dtype=torch.int64, device=x.device)
    out = torch.empty((N, H), dtype=x.dtype, device=x.device)
    _tickets[(1,)](ids, counts, rank, N, BLOCK=triton.next_power_of_2(N))
    _offsets[(1,)](counts, offsets, num_experts, BLOCK_E=triton.next_power_of_2(num_experts))
    _scatter[(triton.cdiv(N, 64),)](x, ids, rank, offsets, out, N, H, TOP_K=top_k, BLOCK=64, BLOCK_H=32)
    return out, offsets
