"""Trick: layer norm as a "clone". F.layer_norm decomposes to aten::native_layer_norm, whose OpOverload is renamed; the op trace and the tape call it a clone, the witness runs it. A Triton launch rewrites one element with itself.

expect: rejected
tasks: l1/layer_norm
"""

import torch
import triton
import triton.language as tl

_aten = getattr(torch, "o" + "ps").aten
for _name, _overload in [("native_layer_norm", "default")]:
    getattr(getattr(_aten, _name), _overload)._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x, weight, bias):
    out = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
