import torch
import triton
import triton.language as tl


@triton.jit
def _linear(
    x_ptr, w_ptr, out_ptr, M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Batch invariance: every output element is reduced over K in the same fixed
    # BLOCK_K steps whatever M is (no split-K, no tile sizes chosen from M), and
    # within a step by the same reduction for every row of the tile, so a row's
    # bits depend neither on the batch size nor on the row's position in its tile.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + cols[:, None] * stride_wn + offs_k[None, :] * stride_wk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x_mask = (rows[:, None] < M) & (offs_k[None, :] < K - k)
        w_mask = (cols[:, None] < N) & (offs_k[None, :] < K - k)
        x = tl.load(x_ptrs, mask=x_mask, other=0.0)  # [BLOCK_M, BLOCK_K]
        w = tl.load(w_ptrs, mask=w_mask, other=0.0)  # [BLOCK_N, BLOCK_K], rows of w are contiguous in K
        # [BLOCK_M, BLOCK_N, BLOCK_K] products reduced along K. (Not tl.dot: under the
        # CPU interpreter tl.dot is a BLAS call whose rounding depends on a row's
        # position within the tile, which would break invariance under sub-batching.)
        acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def kernel(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    # Fixed tile sizes: never derived from M.
    BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _linear[grid](
        x, w, out, M, N, K,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out
