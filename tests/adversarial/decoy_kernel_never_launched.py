"""Trick: decoy kernel defined but never launched. A correct @triton.jit kernel sits in the file for show; kernel() just returns x + y (an operator, so the source has no torch.* compute call).

expect: rejected
tasks: l1/vector_add
reason: no_triton_launch
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    return x + y
