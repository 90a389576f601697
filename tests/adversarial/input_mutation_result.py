"""Trick: input mutation. The kernel writes x + y into x (no output allocation) and returns x.

expect: rejected
tasks: l1/vector_add
reason: input_mutated
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_inplace(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    n = x.numel()
    _add_inplace[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return x
