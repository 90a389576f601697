"""Trick: torch compute the op trace never sees. A TorchDispatchMode is reached through the dispatcher's Python key; with that key excluded for the duration (`torch._C._ExcludeDispatchKeyGuard`, reached by a built name), `torch.softmax` runs without passing the mode, and a copy kernel launches for show.

expect: rejected
tasks: l1/softmax
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


def kernel(x):
    with _C._ExcludeDispatchKeyGuard(_C.DispatchKeySet(_C.DispatchKey.Python)):
        y = torch.softmax(x.float(), dim=-1).to(x.dtype)
    out = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](y, out, x.numel(), BLOCK=1024)
    return out
