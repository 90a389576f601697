"""Trick: reach Python's machinery from inside a @triton.jit body. `getattr` with built names walks from a loaded block to the interpreter's host array behind it (a name a simple check for `.handle` would not see), and numpy adds the two host arrays in place; the block that is stored holds the host's sum.

expect: compile_error
tasks: l1/vector_add
reason: getattr
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
    # The host arrays behind the two blocks, reached by built names; numpy adds them into a's.
    host_a = getattr(getattr(a, "han" + "dle"), "da" + "ta")
    host_a += getattr(getattr(b, "han" + "dle"), "da" + "ta")
    tl.store(out_ptr + offs, a, mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
