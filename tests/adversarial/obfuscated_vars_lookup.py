"""Trick: obfuscated torch op via vars(). vars(torch)["log_softmax"] fetches the op from the module dict without an attribute access the audit can read; a decoy kernel runs on the result.

expect: rejected
tasks: l1/log_softmax
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
    op = vars(torch)["log_" + "softmax"]
    return _decoy(op(x, -1).contiguous())
