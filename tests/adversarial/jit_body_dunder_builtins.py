"""Trick: Python's builtins from inside a @triton.jit body. Under the interpreter a body's `__builtins__` is the builtins dict; `__builtins__["__import__"]("numpy")` gives numpy, which adds the two blocks' host arrays.

expect: compile_error
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
    host = __builtins__["__import__"]("numpy")
    tl.store(out_ptr + offs, host.add(a, b), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
