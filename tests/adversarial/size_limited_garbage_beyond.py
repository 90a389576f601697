"""Trick: correct only at sizes like the public ones. The kernel handles rows up to the largest public length (1024 for l1/softmax) in one block and silently truncates longer rows: every public shape passes, anything larger returns garbage in the tail.

expect: wrong_answer
tasks: l1/softmax
runtime: yes
runtime_expect: wrong_answer
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def kernel(x):
    out = torch.empty_like(x)
    m, n = x.shape
    # Never more than the largest public row length: longer rows keep whatever empty_like held.
    _softmax_rows[(m,)](x, out, min(n, 1024), x.stride(0), BLOCK=1024)
    return out
