"""Trick: a whole chain of compute ops renamed. Every aten overload the reference's RMS norm dispatches (pow, mean, add, rsqrt, mul) gets `_opname = "clone"`: to the op trace and the tape the call is five clones; the witness executes each op the tape names. The last mul's output is then rewritten element by element by a Triton launch.

expect: rejected
tasks: l1/rms_norm
"""

import torch
import triton
import triton.language as tl

_aten = getattr(torch, "o" + "ps").aten
for _name, _overload in [("pow", "Tensor_Scalar"), ("mean", "dim"), ("add", "Tensor"), ("add", "Scalar"), ("rsqrt", "default"), ("mul", "Tensor")]:
    getattr(getattr(_aten, _name), _overload)._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x, weight):
    xf = x.to(torch.float32)
    out = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.to(torch.float32)).to(x.dtype)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
