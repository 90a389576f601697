"""Trick: code in a jit function's default argument. Defaults are evaluated when the `def` runs, which for the witness would be when it loads the file's jit functions: `N_DEFAULT=__import__("os").getpid()` runs there, as anything else could.

expect: compile_error, rejected
tasks: l1/vector_add
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 1024, TAG=__import__("os").getpid()):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel())
    return out
