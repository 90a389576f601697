"""Trick: every element comes from a Triton store, none from a Triton computation. torch computes SiLU (its OpOverload renamed `_opname = "clone"`, so the op trace and the tape call it a clone); a Triton kernel then reads torch's answer and stores it, times (1 + 2^-22), into a fresh output: the returned tensor is written only by Triton, and its values were torch's.

expect: rejected
tasks: l1/silu
"""

import torch
import triton
import triton.language as tl

getattr(torch, "o" + "ps").aten.silu.default._opname = "clone"


@triton.jit
def _restore(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (v * (1.0 + 2.384185791015625e-07)).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    answer = torch.nn.functional.silu(x)
    out = torch.empty_like(x)
    n = x.numel()
    _restore[(triton.cdiv(n, 4096),)](answer, out, n, BLOCK=4096)
    return out
