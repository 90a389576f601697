"""Trick: keep the jit object, swap what it runs. The file's `@triton.jit _add` is honest; at run time the jit object's `fn` attribute (the Python function the interpreter runs and the launch hook names) is replaced by another plain function carrying the same `__qualname__` (and the interpreter's rewriter by one built for it), which writes x + y only where the call needs it and is never compiled for a GPU. The tape still says "_add", so the witness replays the untouched file kernel.

expect: rejected
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _other(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # One program does the whole vector (the grid's other programs return at once).
    if tl.program_id(0) == 0:
        offs = tl.arange(0, BLOCK * 8)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_other.__qualname__ = "_add"
_SWAPPED = []


def kernel(x, y):
    if not _SWAPPED:
        _add.fn = _other
        _add.rewriter = type(_add.rewriter)(_other)
        _SWAPPED.append(True)
    out = torch.empty_like(x)
    n = x.numel()
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
