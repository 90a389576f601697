"""Trick: a method planted on the returned tensor itself. The output is an exact torch.Tensor, but with an instance attribute `detach` that shadows the method: when the worker snapshots the output (`out.detach().to("cpu")`, after the timer stopped and outside the op trace) the planted function returns the answer computed by torch. The kernel itself only writes zeros.

expect: rejected, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    answer = []
    # Computed (untraced) the first time the worker asks, and the same tensor on every later ask.
    out.detach = lambda: answer[0] if answer else answer.append(x.sum(dim=-1)) or answer[0]
    return out
