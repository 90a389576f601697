import torch
import triton
import triton.language as tl


@triton.jit
def _topk_rows(x_ptr, out_ptr, n_cols, x_row_stride, K: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    # Padded lanes load as -inf and the inputs hold no -inf, so they are never picked
    # (K <= N real columns always come first).
    remaining = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    kcols = tl.arange(0, BLOCK_K)
    ids = tl.zeros((BLOCK_K,), dtype=tl.int64)
    for k in range(K):
        best = tl.max(remaining, axis=0)
        # The lowest column among equal maxima: ties go to the lower index first.
        best_id = tl.min(tl.where(remaining == best, cols, BLOCK_N), axis=0)
        ids = tl.where(kcols == k, best_id.to(tl.int64), ids)
        remaining = tl.where(cols == best_id, -float("inf"), remaining)
    out_mask = kcols < K
    tl.store(out_ptr + row * K + kcols, ids, mask=out_mask)


def kernel(x: torch.Tensor, k: int) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty((m, k), dtype=torch.int64, device=x.device)
    block_n = triton.next_power_of_2(n)
    warps = 4 if block_n <= 2048 else (8 if block_n <= 8192 else 16)
    _topk_rows[(m,)](x, out, n, x.stride(0), K=k, BLOCK_N=block_n, BLOCK_K=triton.next_power_of_2(k), num_warps=warps)
    return out
