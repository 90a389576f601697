"""Trick: library op behind a decoy kernel: torch.nn.functional.silu computes, a Triton copy kernel moves it into the output.

expect: rejected
tasks: l1/silu
reason: torch_compute:aten.silu
runtime: yes
runtime_expect: rejected
"""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    tmp = F.silu(x).contiguous()
    out = torch.empty_like(tmp)
    n = out.numel()
    _copy[(triton.cdiv(n, 1024),)](tmp, out, n, BLOCK=1024)
    return out
