"""Trick: a @triton.jit body that calls a plain Python helper. The interpreter runs the helper as Python, and the helper computes the whole row sum with numpy from the host array behind the block it is handed; the compiler would refuse to call it.

expect: compile_error
tasks: l1/row_sum
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


def _host_sum(block):
    values = np.asarray(getattr(getattr(block, "han" + "dle"), "data"), dtype=np.float64)
    return float(values.sum())


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, _host_sum(x))


def kernel(x):
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _row_sum[(m,)](x, out, n, x.stride(0), BLOCK=triton.next_power_of_2(n))
    return out
