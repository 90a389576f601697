"""Trick: an input-range shortcut. x + y with both inputs clamped to [-8, 8] first, as a kernel fitted to (or a lookup table built over) the range the task's own generator draws: standard normal values never leave it, so every trial drawn from it passes; outside it the answer is wrong.

expect: wrong_answer
tasks: l1/vector_add
reason: heavy-tailed
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_clamped(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.minimum(tl.maximum(tl.load(x_ptr + offs, mask=mask), -8.0), 8.0)
    y = tl.minimum(tl.maximum(tl.load(y_ptr + offs, mask=mask), -8.0), 8.0)
    tl.store(out_ptr + offs, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    _add_clamped[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
