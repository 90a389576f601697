"""Trick: torch does 99%, a kernel does 1%. aten::add.Tensor is renamed (`_opname = "clone"`), so torch's x + y is a clone to the op trace and the tape; a real Triton kernel then recomputes honestly only the last 1% of the elements (at least one) in place. The launch is genuine, its stores are genuine, and the output was already right before it ran.

expect: rejected
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl

getattr(torch, "o" + "ps").aten.add.Tensor._opname = "clone"


@triton.jit
def _add_tail(x_ptr, y_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = x + y
    n = x.numel()
    start = n - max(1, n // 100)
    _add_tail[(triton.cdiv(n - start, 256),)](x, y, out, start, n, BLOCK=256)
    return out
