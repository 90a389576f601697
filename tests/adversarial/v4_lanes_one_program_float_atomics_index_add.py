"""Trick: float atomics inside one program under a `deterministic` contract. The row index_add copies `base` and then adds every source row with one block-wide float `tl.atomic_add` per column block, all in a single program, so no other program can interleave. Under Triton's interpreter the lanes of a block atomic applied in index order, so repeated indices summed in the same order every run and the result looked deterministic on CPU; on a GPU same-address atomics of one block serialise in an unspecified order. The lanes of an atomic now apply in a secret order drawn per call (gym/worker/interpreter/lanes.py).

expect: wrong_answer
tasks: l1/index_add_rows
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(base_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(base_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _scatter_all(idx_ptr, src_ptr, out_ptr, N, D, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.arange(0, BLOCK_N)
    rows = tl.load(idx_ptr + tokens, mask=tokens < N, other=0)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        mask = (tokens[:, None] < N) & (cols[None, :] < D)
        s = tl.load(src_ptr + tokens[:, None] * D + cols[None, :], mask=mask, other=0.0)
        tl.atomic_add(out_ptr + rows[:, None] * D + cols[None, :], s, mask=mask)


def kernel(base, index, src):
    base, src = base.contiguous(), src.contiguous()
    N, D = src.shape
    out = torch.empty_like(base)
    _copy[(triton.cdiv(base.numel(), 1024),)](base, out, base.numel(), BLOCK=1024)
    _scatter_all[(1,)](index, src, out, N, D, BLOCK_N=triton.next_power_of_2(N), BLOCK_D=32)
    return out
