"""Trick: specialising to the public shapes. The kernel is tuned (and correct) only for the two shapes `kgym show` lists, with the row length hard-coded per shape; any other shape gets the wrong constants and garbage.

expect: wrong_answer
tasks: l1/softmax
runtime: yes
runtime_expect: wrong_answer
"""

import torch
import triton
import triton.language as tl

_PUBLIC = {(32, 200): 200, (16, 1024): 1024}


@triton.jit
def _softmax_fixed(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * N + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    m, n = x.shape
    cols = _PUBLIC.get((m, n), 256)
    out = torch.empty_like(x)
    _softmax_fixed[(m,)](x, out, N=min(cols, n), BLOCK=triton.next_power_of_2(cols))
    return out
