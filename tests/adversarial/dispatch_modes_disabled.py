"""Trick: switching the op trace off from inside the call. torch.sys.modules (sys as an attribute of torch) reaches torch.utils._python_dispatch, whose _disable_current_modes() pops every active TorchDispatchMode (the grader's OpTrace included) for the duration of a with block; x.softmax runs inside it, a decoy kernel launches outside it.

expect: rejected
tasks: l1/softmax
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def _decoy(out):
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out


_dispatch = torch.sys.modules["torch.utils._python_dispatch"]


def kernel(x):
    with _dispatch._disable_current_modes():
        out = x.softmax(dim=-1).contiguous()
    return _decoy(out)
