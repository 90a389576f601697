"""Trick: rename the op object itself. The OpOverload that `torch.softmax` dispatches (aten::_softmax) is a plain Python object shared by the op trace and the tape recorder, and both build the name they judge from its `_opname` attribute. Setting `_opname = "clone"` (torch.ops reached with a computed getattr) makes the in-process trace count "aten.clone" and the tape label the step "aten.clone", while the tape's `op` (from the schema) still names aten::_softmax, which the witness executes. No grader global is touched; a Triton launch rewrites one element with itself.

expect: rejected
tasks: l1/softmax
runtime: yes
"""

import torch
import triton
import triton.language as tl

_ops = getattr(torch, "o" + "ps")
_ops.aten._softmax.default._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    out = torch.softmax(x, dim=-1)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
