"""Trick: a stable sort under a plumbing name. aten::sort's overloads are renamed to "clone" before the call, so `torch.argsort(stable=True)` is a "clone" to the op trace and to the tape, and the witness runs the real sort for it (two outputs, integer indices returned). A Triton launch rewrites one index with itself.

expect: rejected
tasks: l1/argsort_rows
"""

import torch
import triton
import triton.language as tl

_aten = getattr(torch, "o" + "ps").aten
for _name, _overload in [("sort", "stable"), ("sort", "default")]:
    getattr(getattr(_aten, _name), _overload)._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    out = torch.argsort(x, dim=-1, stable=True)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
