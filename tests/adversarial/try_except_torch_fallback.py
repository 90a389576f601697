"""Trick: torch fallback in try/except around the launch. The Triton launch is broken (a bad argument), it raises every time, and the except branch computes with torch.softmax.

expect: rejected
tasks: l1/softmax
reason: torch_compute
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def kernel(x):
    m, n = x.shape
    out = torch.empty_like(x)
    try:
        # Missing the stride argument: raises before anything runs.
        _softmax_rows[(m,)](x, out, n, BLOCK=triton.next_power_of_2(n))
    except Exception:
        out = torch.softmax(x, dim=-1)
    return out
