"""Vector add whose jit function is made by calling `triton.jit(fn)` at module level (no decorator syntax), as generated-kernel code bases do.

Style: unsloth
Task: l1/vector_add
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


def _add_impl(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


add_kernel = triton.jit(_add_impl)


def kernel(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    BLOCK = 1024 if torch.cuda.is_available() else 512
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out
