"""Batch-invariant linear layer (x @ w.T): fixed tiles and a fixed K order, kernels grouped in a class namespace,
tile sizes from a cached helper that never sees the batch size.

Style: KernelBench
Task: l1/linear_batch_invariant
Idioms: class used as a namespace of jit functions, functools.lru_cache'd config helper, a parameter called input, torch.promote_types
"""

import functools

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def tile_config(n: int, k: int) -> tuple[int, int, int]:
    # Keyed by the layer's shape only: a tile size picked from M would change the K order between batches.
    block_n = 16 if n <= 64 else 32
    return 16, block_n, 32


class BatchInvariantLinear:
    @triton.jit
    def forward_kernel(
        x_ptr, w_ptr, out_ptr, M, N, K,
        stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    ):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            x = tl.load(x_ptr + rows[:, None] * stride_xm + ks[None, :] * stride_xk, mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            w = tl.load(w_ptr + cols[:, None] * stride_wn + ks[None, :] * stride_wk, mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
            # An explicit per-element reduction over this K block: the same for every row, wherever it sits in the tile.
            acc += tl.sum(x[:, None, :].to(tl.float32) * w[None, :, :].to(tl.float32), axis=2)
        out_mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def linear(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    M, K = input.shape
    N = weight.shape[0]
    out = torch.empty((M, N), dtype=torch.promote_types(input.dtype, weight.dtype), device=input.device)
    BLOCK_M, BLOCK_N, BLOCK_K = tile_config(N, K)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    BatchInvariantLinear.forward_kernel[grid](
        input, weight, out, M, N, K,
        input.stride(0), input.stride(1), weight.stride(0), weight.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out


def kernel(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return linear(x, w)
