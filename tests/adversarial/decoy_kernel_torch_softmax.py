"""Trick: library op behind a decoy kernel. A Triton kernel is launched on the output (a no-op copy), but the values come from torch.softmax.

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


def kernel(x):
    out = torch.softmax(x, dim=-1)
    n = out.numel()
    _touch[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
    return out
