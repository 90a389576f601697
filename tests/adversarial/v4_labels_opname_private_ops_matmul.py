"""Trick: the same rename through torch's private `_ops` module (not on the audit's list). aten::mm's OpOverload gets `_opname = "view"`: the op trace and the tape call the matmul "aten.view" (a view: plumbing), the witness runs aten::mm because the tape's `op` names it. A Triton launch touches one element.

expect: rejected
tasks: l1/matmul
"""

import torch
import triton
import triton.language as tl

_mm = torch._ops.ops.aten.mm.default
_mm._opname = "view"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(a, b):
    out = torch.mm(a, b)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
