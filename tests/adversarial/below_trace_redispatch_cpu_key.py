"""Trick: call an aten kernel below the dispatcher's Python layer. `OpOverload.redispatch` with a key set holding only the CPU key runs aten.mm's CPU kernel directly, so the op trace (a Python dispatch mode) never sees it; a copy kernel launches for show.

expect: rejected
tasks: l1/matmul
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


_C = getattr(torch, "_" + "C")
_CPU = _C.DispatchKeySet(_C.DispatchKey.CPU)


def kernel(a, b):
    product = torch.ops.aten.mm.default.redispatch(_CPU, a, b)
    out = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    _copy[(triton.cdiv(out.numel(), 1024),)](product, out, out.numel(), BLOCK=1024)
    return out
