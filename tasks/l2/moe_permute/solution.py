import torch
import triton
import triton.language as tl


@triton.jit
def _block_counts(ids_ptr, counts_ptr, N, E, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    # counts[b, e] = how many of the flat positions b*BLOCK .. b*BLOCK+BLOCK-1 chose expert e.
    b = tl.program_id(0)
    offs = b * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    ids = tl.load(ids_ptr + offs, mask=mask, other=-1)
    experts = tl.arange(0, BLOCK_E)
    onehot = (ids[:, None] == experts[None, :]).to(tl.int32)
    counts = tl.sum(onehot, axis=0)
    e_mask = experts < E
    tl.store(counts_ptr + b * E + experts, counts, mask=e_mask)


@triton.jit
def _scan_blocks(counts_ptr, base_ptr, offsets_ptr, NB, E, BLOCK_B: tl.constexpr, BLOCK_E: tl.constexpr):
    # One program: base[b, e] = sum of counts[b', e] over blocks b' < b (an exclusive scan down
    # each expert's column), then offsets = [0, cumsum of the per-expert totals].
    experts = tl.arange(0, BLOCK_E)
    e_mask = experts < E
    running = tl.zeros((BLOCK_E,), dtype=tl.int32)
    for b0 in range(0, NB, BLOCK_B):
        bs = b0 + tl.arange(0, BLOCK_B)
        tile_mask = (bs[:, None] < NB) & e_mask[None, :]
        c = tl.load(counts_ptr + bs[:, None] * E + experts[None, :], mask=tile_mask, other=0)
        inclusive = tl.cumsum(c, axis=0)
        tl.store(base_ptr + bs[:, None] * E + experts[None, :], running[None, :] + inclusive - c, mask=tile_mask)
        running += tl.sum(c, axis=0)
    tl.store(offsets_ptr + 1 + experts, tl.cumsum(running.to(tl.int64), axis=0), mask=e_mask)
    tl.store(offsets_ptr, tl.zeros((), dtype=tl.int64))


@triton.jit
def _scatter_rows(
    x_ptr, ids_ptr, base_ptr, offsets_ptr, out_ptr, N, H, E,
    stride_xt, stride_xh, stride_ot, stride_oh,
    TOP_K: tl.constexpr, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_H: tl.constexpr,
):
    # Destination of flat position i with expert e: offsets[e] + (earlier blocks' rows of e)
    # + (rows of e before i inside this block); then copy row x[i // TOP_K] there.
    b = tl.program_id(0)
    offs = b * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    ids = tl.load(ids_ptr + offs, mask=mask, other=-1)
    experts = tl.arange(0, BLOCK_E)
    onehot = ids[:, None] == experts[None, :]
    running = tl.cumsum(onehot.to(tl.int32), axis=0)
    rank = tl.sum(tl.where(onehot, running, 0), axis=1) - 1
    safe_ids = tl.where(mask, ids, 0)
    before = tl.load(base_ptr + b * E + safe_ids, mask=mask, other=0)
    start = tl.load(offsets_ptr + safe_ids, mask=mask, other=0)
    dest = (start + before + rank).to(tl.int64)
    src = (offs // TOP_K).to(tl.int64)
    for h0 in range(0, H, BLOCK_H):
        cols = h0 + tl.arange(0, BLOCK_H)
        tile_mask = mask[:, None] & (cols[None, :] < H)
        v = tl.load(x_ptr + src[:, None] * stride_xt + cols[None, :] * stride_xh, mask=tile_mask)
        tl.store(out_ptr + dest[:, None] * stride_ot + cols[None, :] * stride_oh, v, mask=tile_mask)


def kernel(x: torch.Tensor, expert_ids: torch.Tensor, num_experts: int) -> tuple[torch.Tensor, torch.Tensor]:
    T, H = x.shape
    top_k = expert_ids.shape[1]
    N = T * top_k
    E = num_experts
    ids = expert_ids.contiguous()
    BLOCK = 128
    BLOCK_E = triton.next_power_of_2(E)
    NB = triton.cdiv(N, BLOCK)
    counts = torch.zeros((NB, E), dtype=torch.int32, device=x.device)
    base = torch.zeros((NB, E), dtype=torch.int32, device=x.device)
    offsets = torch.zeros((E + 1,), dtype=torch.int64, device=x.device)
    out = torch.empty((N, H), dtype=x.dtype, device=x.device)
    _block_counts[(NB,)](ids, counts, N, E, BLOCK=BLOCK, BLOCK_E=BLOCK_E)
    _scan_blocks[(1,)](counts, base, offsets, NB, E, BLOCK_B=16, BLOCK_E=BLOCK_E)
    _scatter_rows[(NB,)](
        x, ids, base, offsets, out, N, H, E,
        x.stride(0), x.stride(1), out.stride(0), out.stride(1),
        TOP_K=top_k, BLOCK=BLOCK, BLOCK_E=BLOCK_E, BLOCK_H=min(triton.next_power_of_2(H), 128),
    )
    return out, offsets
