"""Trick: wrong strides / overlapping output. Only row 0 is computed by the kernel; the result is row 0 expanded to [M, N] with stride 0 (one row of memory standing for all of them).

expect: wrong_answer
tasks: l1/softmax
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_row(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    row = torch.empty(1, n, dtype=x.dtype, device=x.device)
    _softmax_row[(1,)](x, row, n, BLOCK=triton.next_power_of_2(n))
    return row.expand(m, n)
