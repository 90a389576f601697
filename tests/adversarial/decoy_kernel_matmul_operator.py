"""Trick: library op behind a decoy kernel, written with the @ operator so no torch.* call appears in the source. A decoy Triton kernel scales by 1.0 after `a @ b` did the work.

expect: rejected
tasks: l1/matmul
reason: torch_compute
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scale(out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) * alpha, mask=mask)


def kernel(a, b):
    out = (a @ b).contiguous()
    n = out.numel()
    _scale[(triton.cdiv(n, 1024),)](out, n, 1.0, BLOCK=1024)
    return out
