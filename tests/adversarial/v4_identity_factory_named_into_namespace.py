"""Trick: a factory kernel named after a class namespace's member. The file keeps an honest `Kernels.silu_fwd` jit function in a class used as a namespace; a factory builds, at run time, a jit function from a closure over a constant (the file's kernels-file rules never see it) and names it "Kernels.silu_fwd" (`__qualname__`), so the tape names the honest member and the witness replays that one.

expect: rejected
tasks: l1/silu
"""

import torch
import triton
import triton.language as tl


class Kernels:
    @triton.jit
    def silu_fwd(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (x * tl.sigmoid(x)).to(out_ptr.dtype.element_ty), mask=mask)


def _factory():
    def silu_fwd(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty), mask=mask)

    silu_fwd.__qualname__ = "Kernels.silu_fwd"
    return triton.jit(silu_fwd)


_MADE = []


def kernel(x):
    if not _MADE:
        _MADE.append(_factory())
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _MADE[0][(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096)
    return out
