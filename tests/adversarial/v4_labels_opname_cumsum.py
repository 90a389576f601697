"""Trick: a prefix sum under a plumbing name. aten::cumsum's OpOverload gets `_opname = "copy_"`, so the op trace and the tape call torch's cumsum a copy; the witness runs the cumsum the tape's `op` names. A launch rewrites one element with itself.

expect: rejected
tasks: l1/cumsum
"""

import torch
import triton
import triton.language as tl

getattr(torch, "o" + "ps").aten.cumsum.default._opname = "copy_"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)


def kernel(x):
    out = torch.cumsum(x, dim=-1)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
