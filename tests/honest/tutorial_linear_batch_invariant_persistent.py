"""Batch-invariant linear layer with a persistent grid: a fixed number of programs loops over output tiles,
each tile reduced over K in the same fixed BLOCK_K steps whatever the batch size.

Style: Triton tutorials
Task: l1/linear_batch_invariant
Idioms: persistent kernel (grid = number of SMs, loop over tiles), do_not_specialize, torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl

NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count if torch.cuda.is_available() else 4


@triton.jit(do_not_specialize=["M"])
def linear_persistent_kernel(
    x_ptr, w_ptr, out_ptr, M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
):
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile_id in range(tl.program_id(0), num_tiles, NUM_PROGRAMS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            x_mask = (rows[:, None] < M) & (offs_k[None, :] < K - k)
            w_mask = (cols[:, None] < N) & (offs_k[None, :] < K - k)
            x = tl.load(x_ptr + rows[:, None] * stride_xm + (k + offs_k)[None, :] * stride_xk, mask=x_mask, other=0.0)
            # w is [N, K]: a [BLOCK_N, BLOCK_K] tile of it is w.T's [BLOCK_K, BLOCK_N] tile, transposed.
            w = tl.load(w_ptr + cols[:, None] * stride_wn + (k + offs_k)[None, :] * stride_wk, mask=w_mask, other=0.0)
            acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
        out_mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 32  # fixed: never derived from M
    num_tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    grid = (min(NUM_SMS, num_tiles),)
    linear_persistent_kernel[grid](
        x, w, out, M, N, K,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, NUM_PROGRAMS=NUM_SMS,
    )
    return out


def kernel(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return linear(x, w)
