"""Trick: partial computation. The kernel only processes the first half of the rows (half the work, half the time); the rest of the torch.empty output is whatever memory held.

expect: wrong_answer
tasks: l1/softmax
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    _softmax_rows[((m + 1) // 2,)](x, out, n, x.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(n))
    return out
