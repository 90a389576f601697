"""Trick: a data bridge to numpy through getattr with a constant name. getattr(t, "numpy")() is the same call as t.numpy() but is not an attribute node; numpy adds the arrays on the host, straight into the output tensor's memory (float32 addition is correctly rounded, so bit-exact), and a decoy kernel launches. No aten op beyond detach runs.

expect: rejected
tasks: l1/vector_add
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


def _decoy(out):
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out


def _host(t):
    return getattr(t, "numpy")()


def kernel(x, y):
    out = torch.empty_like(x)
    _host(out)[:] = _host(x) + _host(y)
    return _decoy(out)
