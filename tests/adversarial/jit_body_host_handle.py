"""Trick: a @triton.jit body that is Python under the CPU interpreter. It loads a block, then reaches the interpreter's host array behind the Triton tensor (`.handle.data`) and sums it with numpy; such a body could never compile for a GPU.

expect: compile_error
tasks: l1/row_sum
reason: handle
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    total = x.handle.data.astype("float64").sum()
    tl.store(out_ptr + row, total)


def kernel(x):
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _row_sum[(m,)](x, out, n, x.stride(0), BLOCK=triton.next_power_of_2(n))
    return out
