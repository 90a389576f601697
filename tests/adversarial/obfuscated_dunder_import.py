"""Trick: obfuscated import with __import__. torch.nn.functional is loaded by __import__ with a reversed module name, and its linear() does the matmul; a decoy kernel runs on the result.

expect: rejected
tasks: l1/matmul
reason: audit:dynamic_code
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


def kernel(a, b):
    functional = __import__("lanoitcnuf.nn.hcrot"[::-1], fromlist=["linear"])
    return _decoy(functional.linear(a, b.t()).contiguous())
