"""Trick: reading the grader's tensors via gc. The kernel walks gc.get_objects() for a float tensor of the output's shape that is not its own input (an expected output, or any answer the grader keeps around) and returns a copy of it, launching a decoy kernel.

expect: rejected
tasks: l1/softmax
reason: audit:import
runtime: yes
runtime_expect: rejected, wrong_answer
"""

import gc

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    found = None
    for obj in gc.get_objects():
        if type(obj) is torch.Tensor and obj is not x and obj.shape == x.shape and obj.dtype == x.dtype:
            found = obj
    out = torch.empty_like(x)
    src = (found if found is not None else x).contiguous()
    _copy[(triton.cdiv(out.numel(), 1024),)](src, out, out.numel(), BLOCK=1024)
    return out
