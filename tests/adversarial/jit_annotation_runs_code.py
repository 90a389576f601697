"""Trick: code in a jit function's parameter annotation. Annotations are evaluated when the `def` runs: one that calls `__import__("os").getpid()` would run in whatever process loads the file's jit functions, the witness included.

The static audit refuses the `__import__` (`dynamic_code`). With the audit off there is nothing
left to stop, so this entry is not graded that way: the kernels file keeps an annotation that is
not a Triton type as the string of its source, so nothing runs in the witness, and in the
submission's own process the import is judged by the audit hooks; the vector add is otherwise right.

expect: compile_error, rejected
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n: __import__("os").getpid() and int, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
