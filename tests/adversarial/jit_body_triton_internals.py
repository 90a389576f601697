"""Trick: call Triton's own runtime from a @triton.jit body. `triton.runtime.interpreter` is reachable as an attribute chain from the `triton` module a kernel may name; from there a body can reach the interpreter's host machinery and numpy. Not part of the Triton language.

expect: compile_error, rejected
tasks: l1/vector_add
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(y_ptr + offs, mask=mask)
    host = triton.runtime.interpreter.np
    tl.store(out_ptr + offs, host.add(a, b), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
