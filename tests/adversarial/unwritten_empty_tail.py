"""Trick: unwritten torch.empty. The grid covers only whole blocks and the tail is never written, hoping the allocator hands back a buffer that already holds the answer from an earlier call.

expect: wrong_answer, rejected
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_full_blocks(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def kernel(x, y):
    out = torch.empty_like(x)
    blocks = x.numel() // 256
    _add_full_blocks[(max(blocks, 1) if x.numel() >= 256 else 0,)](x, y, out, BLOCK=256)
    return out
