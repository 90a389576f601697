"""Trick: hide an input mutation from the check. The kernel adds y into x in place (no output allocation) and returns x; before returning it plants `contiguous` on the input tensor object, so a mutation check that calls `x.contiguous()` on what the kernel was handed compares the saved original against itself.

expect: rejected
tasks: l1/vector_add
reason: input_mutated
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_into(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    original = torch.empty_like(x)
    original.copy_(x)
    _add_into[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    result = torch.empty_like(x)
    result.copy_(x)
    x.contiguous = lambda *args, **kwargs: original
    return result
