"""Trick: a side stream. The kernel is launched on a fresh torch.cuda.Stream and the call returns without waiting for it, so a per-stream timer would stop early; on CPU (no CUDA) it falls back to running inline.

expect: rejected
tasks: l1/vector_add
reason: audit:torch
"""

import contextlib

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_side = torch.cuda.Stream() if torch.cuda.is_available() else None


def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    with torch.cuda.stream(_side) if _side is not None else contextlib.nullcontext():
        _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
