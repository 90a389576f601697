"""Trick: a @triton.jit body that uses numpy as a global module. Under the interpreter `np.float64(...)` and numpy's reductions work on the host values of a block; compiled Triton cannot access a global that is not a constexpr or part of the language.

expect: compile_error
tasks: l1/vector_add
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, np.add(a, b), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
