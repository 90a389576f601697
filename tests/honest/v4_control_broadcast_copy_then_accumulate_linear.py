"""Batch-invariant linear whose output is first initialised by a broadcast copy (zeros expanded over the batch, the way a bias row is broadcast into an output), then a kernel accumulates x @ w^T into it in fixed K steps.

Style: Liger-Kernel
Task: l1/linear_batch_invariant
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def linear_accumulate_kernel(x_ptr, w_ptr, out_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    acc = tl.load(out_ptr + rows[:, None] * N + cols[None, :], mask=out_mask, other=0.0).to(tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rows[:, None] * K + (k + ks)[None, :], mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[:, None] * K + (k + ks)[None, :], mask=(cols[:, None] < N) & ((k + ks)[None, :] < K), other=0.0)
        acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def kernel(x, w):
    x = x.contiguous()
    w = w.contiguous()
    M, K = x.shape
    N = w.shape[0]
    bias_row = torch.zeros((1, N), dtype=x.dtype, device=x.device)
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    out.copy_(bias_row.expand(M, N))
    BLOCK_M, BLOCK_N, BLOCK_K = (32, 32, 32) if torch.cuda.is_available() else (16, 16, 32)
    linear_accumulate_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](x, w, out, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return out
