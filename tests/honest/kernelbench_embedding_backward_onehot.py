"""Deterministic embedding backward: a one-hot [weights x indices] tile times the gradient tile with tl.dot,
in a fixed order over the indices (no atomics).

Style: KernelBench
Task: l1/embedding_backward
Idioms: class used as a namespace of jit functions, functools.lru_cache'd block-size helper, do_not_specialize
"""

import functools

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=64)
def block_sizes(d: int) -> tuple[int, int, int]:
    block_d = min(64, triton.next_power_of_2(d))
    return 32, block_d, 32  # BLOCK_W, BLOCK_D, BLOCK_N


class EmbeddingBackwardKernels:
    @triton.jit(do_not_specialize=["N", "W"])
    def onehot_dot(
        idx_ptr, grad_ptr, out_ptr, N, D, W, stride_gn, stride_ow,
        BLOCK_W: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
    ):
        rows = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
        cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
        acc = tl.zeros((BLOCK_W, BLOCK_D), dtype=tl.float32)
        for n0 in range(0, N, BLOCK_N):
            offs_n = n0 + tl.arange(0, BLOCK_N)
            idx = tl.load(idx_ptr + offs_n, mask=offs_n < N, other=-1)
            g_mask = (offs_n[:, None] < N) & (cols[None, :] < D)
            g = tl.load(grad_ptr + offs_n[:, None] * stride_gn + cols[None, :], mask=g_mask, other=0.0)
            onehot = (rows[:, None] == idx[None, :]).to(tl.float32)
            # Full float32 products (a one-hot times g is exact); no TF32.
            acc = tl.dot(onehot, g.to(tl.float32), acc, input_precision="ieee")
        out_mask = (rows[:, None] < W) & (cols[None, :] < D)
        tl.store(out_ptr + rows[:, None] * stride_ow + cols[None, :], acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def embedding_dense_backward(grad_output: torch.Tensor, indices: torch.Tensor, num_weights: int) -> torch.Tensor:
    grad_output = grad_output.contiguous()
    N, D = grad_output.shape
    out = torch.empty((num_weights, D), dtype=grad_output.dtype, device=grad_output.device)
    BLOCK_W, BLOCK_D, BLOCK_N = block_sizes(D)
    grid = (triton.cdiv(num_weights, BLOCK_W), triton.cdiv(D, BLOCK_D))
    EmbeddingBackwardKernels.onehot_dot[grid](
        indices.contiguous(), grad_output, out, N, D, num_weights, grad_output.stride(0), out.stride(0),
        BLOCK_W=BLOCK_W, BLOCK_D=BLOCK_D, BLOCK_N=BLOCK_N,
    )
    return out


def kernel(indices: torch.Tensor, grad_output: torch.Tensor, num_weights: int) -> torch.Tensor:
    return embedding_dense_backward(grad_output, indices, num_weights)
