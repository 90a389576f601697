"""Vector add as an in-place update: the output starts as a clone of x and a kernel adds y into it (the way index_add-style kernels initialise their output).

Style: FlagGems
Task: l1/vector_add
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_inplace_kernel(out_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, acc + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = x.clone()
    n = out.numel()
    BLOCK = 1024 if torch.cuda.is_available() else 512
    add_inplace_kernel[(triton.cdiv(n, BLOCK),)](out, y, n, BLOCK=BLOCK)
    return out
