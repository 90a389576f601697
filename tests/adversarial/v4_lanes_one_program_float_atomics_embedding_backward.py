"""Trick: float atomics inside one program under a `deterministic` contract. The whole embedding backward runs as a single program: one block holds every token, and each token's gradient row is scattered into the weight gradient with one block-wide float `tl.atomic_add`, so the shuffled program order has nothing to shuffle. Under Triton's interpreter a block atomic applied its lanes in index order, so repeated indices summed in the same order every run and three runs were bit-identical on CPU; on a GPU the lanes are threads of several warps, and same-address atomics serialise in an unspecified order. The lanes of an atomic now apply in a secret order drawn per call (gym/worker/interpreter/lanes.py), as on a GPU.

expect: wrong_answer
tasks: l1/embedding_backward
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_all(idx_ptr, grad_ptr, out_ptr, N, D, stride_gn, stride_ow, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.arange(0, BLOCK_N)
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
    _scatter_all[(1,)](indices, grad_output, out, N, D, grad_output.stride(0), out.stride(0), BLOCK_N=triton.next_power_of_2(N), BLOCK_D=32)
    return out
