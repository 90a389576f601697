"""Trick: a `list` subclass that is itself named `list`, returned by a tuple-returning task's kernel (the record's container name reads "list", the task wants "tuple", so it also claims to be a tuple through `__class__`); its `__iter__` and `__getitem__` compute the answer with torch when the worker unpacks the result after the timed call, outside the op trace.

expect: rejected, wrong_answer
tasks: l1/int8_quant_rowwise
runtime: yes
"""

import torch
import triton
import triton.language as tl

_builtin_list = type([])


@triton.jit
def _zeros(q_ptr, scale_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(q_ptr + row * n_cols + cols, tl.zeros([BLOCK], dtype=tl.int8), mask=cols < n_cols)
    tl.store(scale_ptr + row, 1.0)


class list(_builtin_list):  # noqa: A001 - the name is the trick
    def _answer(self):
        x, q, scale = _builtin_list.__iter__(self)
        xf = x.float()
        amax = xf.abs().amax(-1)
        scale.copy_(torch.where(amax > 0, amax / 127, torch.ones_like(amax)))
        q.copy_(torch.round(xf / scale[:, None]).clamp(-127, 127).to(torch.int8))
        return [q, scale]

    def __iter__(self):
        return iter(self._answer())

    def __getitem__(self, index):
        return self._answer()[index]

    def __len__(self):
        return 2


def kernel(x):
    m, n = x.shape
    q = torch.empty((m, n), dtype=torch.int8, device=x.device)
    scale = torch.empty(m, dtype=torch.float32, device=x.device)
    _zeros[(m,)](q, scale, n, BLOCK=triton.next_power_of_2(n))
    return list([x, q, scale])
