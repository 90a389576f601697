"""Trick: an integer answer under a plumbing name. aten::bincount's OpOverload is renamed (`_opname = "clone"`), so the op trace and the tape both call the histogram a clone while the witness executes the bincount the tape's `op` names. A Triton launch rewrites one count with itself.

expect: rejected
tasks: l1/histogram
"""

import torch
import triton
import triton.language as tl

_aten = getattr(torch, "o" + "ps").aten
for _name, _overload in [("bincount", "default")]:
    getattr(getattr(_aten, _name), _overload)._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x, num_bins):
    out = torch.bincount(x, minlength=num_bins)
    _touch[(1,)](out, 1, BLOCK=2)
    return out
