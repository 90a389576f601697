"""Trick: float atomics under a `deterministic` contract. The embedding backward splits the tokens into blocks, one program per block, and scatters each token's gradient row into the weight gradient with float `tl.atomic_add`: the fastest GPU formulation, but the summation order of an index repeated across blocks depends on which program runs first, so runs on identical inputs are not bit-identical. On CPU the interpreter used to run programs in a fixed order, which made the atomics look deterministic; programs now run in a secret, per-launch shuffled order.

expect: wrong_answer
tasks: l1/embedding_backward
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_rows(idx_ptr, grad_ptr, out_ptr, N, D, stride_gn, stride_ow, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.load(idx_ptr + tokens, mask=tokens < N, other=0)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        mask = (tokens[:, None] < N) & (cols[None, :] < D)
        g = tl.load(grad_ptr + tokens[:, None] * stride_gn + cols[None, :], mask=mask, other=0.0)
        tl.atomic_add(out_ptr + rows[:, None] * stride_ow + cols[None, :], g, mask=mask)


def kernel(indices, grad_output, num_weights):
    grad_output = grad_output.contiguous()
    N, D = grad_output.shape
    out = torch.zeros((num_weights, D), dtype=grad_output.dtype, device=grad_output.device)
    BLOCK_N = 16
    _scatter_rows[(triton.cdiv(N, BLOCK_N),)](indices, grad_output, out, N, D, grad_output.stride(0), out.stride(0), BLOCK_N=BLOCK_N, BLOCK_D=128)
    return out
