"""Trick: swap a jit function's code object after it was defined. The file shows an honest-looking kernel; at import its Python function gets the code of a plain function that computes on the host arrays behind the blocks (interpreter only), so what runs is not what the file says.

expect: rejected, compile_error
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
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)


def _cheat(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


setattr(_add.fn, "__co" + "de__", _cheat.__code__)
_add.fn.__name__ = "_cheat"


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
