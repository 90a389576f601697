"""Trick: a cross-lane read without a barrier. The row prefix sum runs block by block in one program and, instead of keeping the running total in a register, reads it back from memory: the last column the previous block stored (`tl.load(out + start - 1)`, read by every lane, written by the block's last lane). Under Triton's interpreter a store is visible to every lane at once, so this was exact on CPU; on a GPU the lanes are threads of several warps, and one that reads an address another thread stored since the last `tl.debug_barrier()` races with that store (warps are not kept in step) and may read the old value. The CPU grade now gives a lane the value from before another lane's unsynchronised store (gym/worker/interpreter/lanes.py), as a GPU may.

expect: wrong_answer
tasks: l1/cumsum
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = out_ptr + row * stride
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        # The running total: what the previous block's last lane stored (no barrier in between).
        carry = tl.load(base + start - 1, mask=start > 0, other=0.0).to(tl.float32)
        tl.store(base + cols, (tl.cumsum(x, axis=0) + carry).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.zeros_like(x)
    _cumsum_rows[(m,)](x, out, n, x.stride(0), BLOCK=512)
    return out
