"""Trick: code after the timer, in the result's own methods. The call returns an instance of a tuple subclass that is itself named `tuple` (so the record's container name reads "tuple"); the honest kernel runs for show on zeros, and the class's `__iter__`, which the worker calls to unpack the result after the timed call returned (outside the op trace), computes the real answer with torch.

expect: rejected, wrong_answer
tasks: l1/int8_quant_rowwise
runtime: yes
"""

import builtins

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(q_ptr, scale_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(q_ptr + row * n_cols + cols, tl.zeros([BLOCK], dtype=tl.int8), mask=cols < n_cols)
    tl.store(scale_ptr + row, 1.0)


class tuple(builtins.tuple):  # noqa: A001 - the name is the trick
    def __iter__(self):
        x, q, scale = builtins.tuple.__iter__(self)
        xf = x.float()
        amax = xf.abs().amax(-1)
        scale.copy_(torch.where(amax > 0, amax / 127, torch.ones_like(amax)))
        q.copy_(torch.round(xf / scale[:, None]).clamp(-127, 127).to(torch.int8))
        return builtins.iter((q, scale))


def kernel(x):
    m, n = x.shape
    q = torch.empty((m, n), dtype=torch.int8, device=x.device)
    scale = torch.empty(m, dtype=torch.float32, device=x.device)
    _zeros[(m,)](q, scale, n, BLOCK=triton.next_power_of_2(n))
    return tuple((x, q, scale))
