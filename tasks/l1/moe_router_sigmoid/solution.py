import torch
import triton
import triton.language as tl


@triton.jit
def _route(
    logits_ptr, weights_ptr, ids_ptr, T, E,
    stride_lt, stride_le,
    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    kcols = tl.arange(0, BLOCK_K)
    in_mask = (rows[:, None] < T) & (cols[None, :] < E)
    x = tl.load(logits_ptr + rows[:, None] * stride_lt + cols[None, :] * stride_le, mask=in_mask, other=0.0).to(tl.float32)
    scores = tl.sigmoid(x)
    # Padding columns can never be selected.
    remaining = tl.where(in_mask, scores, float("-inf"))
    picked = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int64)
    for k in tl.static_range(TOP_K):
        best = tl.max(remaining, axis=1)
        # Lowest column among equal maxima.
        best_id = tl.min(tl.where(remaining == best[:, None], cols[None, :], BLOCK_E), axis=1)
        picked = tl.where(kcols[None, :] == k, best[:, None], picked)
        ids = tl.where(kcols[None, :] == k, best_id[:, None].to(tl.int64), ids)
        remaining = tl.where(cols[None, :] == best_id[:, None], float("-inf"), remaining)
    total = tl.sum(picked, axis=1)
    weights = picked / total[:, None]
    out_mask = (rows[:, None] < T) & (kcols[None, :] < TOP_K)
    out_offs = rows[:, None] * TOP_K + kcols[None, :]
    tl.store(weights_ptr + out_offs, weights, mask=out_mask)
    tl.store(ids_ptr + out_offs, ids, mask=out_mask)


def kernel(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    T, E = logits.shape
    weights = torch.empty((T, top_k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((T, top_k), dtype=torch.int64, device=logits.device)
    BLOCK_T = 16
    _route[(triton.cdiv(T, BLOCK_T),)](
        logits, weights, ids, T, E, logits.stride(0), logits.stride(1),
        TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_E=triton.next_power_of_2(E), BLOCK_K=triton.next_power_of_2(top_k),
    )
    return weights, ids
