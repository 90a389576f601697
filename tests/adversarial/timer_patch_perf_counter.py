"""Trick: timer monkeypatching. time.perf_counter is replaced at import by a clock that advances a nanosecond per reading, so any timing taken with it after the import shows a near-zero duration; the kernel itself is honest.

expect: rejected
tasks: l1/vector_add
reason: audit:
"""

import time

import torch
import triton
import triton.language as tl

_ticks = [0.0]


def _fake_perf_counter():
    _ticks[0] += 1e-9
    return _ticks[0]


time.perf_counter = _fake_perf_counter


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
