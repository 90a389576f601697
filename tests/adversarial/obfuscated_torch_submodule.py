"""Trick: torch compute through paths the audit does not list: torch.special.expit (a torch submodule call, two dots deep) for the sigmoid, and getattr with a constant name for the multiply; a decoy kernel runs on the result.

expect: rejected
tasks: l1/silu
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


def kernel(x):
    gate = torch.special.expit(x)
    return _decoy(getattr(x, "mul")(gate).contiguous())
