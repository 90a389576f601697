"""Trick: obfuscated torch op via getattr with a built string. getattr(torch, "soft" + "max") hides torch.softmax from a name search; a decoy kernel is launched on the result.

expect: rejected
tasks: l1/softmax
reason: torch_compute
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


_OP = "".join(["soft", "max"])


def kernel(x):
    return _decoy(getattr(torch, _OP)(x, dim=-1).contiguous())
