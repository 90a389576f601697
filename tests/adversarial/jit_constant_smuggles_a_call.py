"""Trick: a module constant a kernel reads, whose value is a call of anything (`sum(...)` over a generator reading the job folder here): the witness would have to evaluate it to load the kernel. Only constant expressions are kept, so the kernel that needs the constant is left without it.

expect: compile_error, rejected
tasks: l1/vector_add
runtime: yes
"""

import torch
import triton
import triton.language as tl

SCALE = tl.constexpr(min(1, sum(len(name) for name in __import__("os").listdir("/job/in"))))


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)) * SCALE, mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
