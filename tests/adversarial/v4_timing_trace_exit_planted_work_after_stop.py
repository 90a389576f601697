"""Trick: do the work after the clock stops. The call's op trace object (the innermost entry of the tripwire's `_ACTIVE` list) gets an instance attribute `__exit__`; the worker's `traced` context calls `self.trace.__exit__` explicitly, after `timer.stop()`, so the planted function runs untimed but still with the tape recording: it launches the honest `_row_sum` into the returned tensor there, then does the real exit. The timed part only allocates and waits 0.3x of the honest kernel's time (measured once per shape off the tape), just above the CPU floor: the reported speed is about 3x the kernel's.

expect: rejected
tasks: l1/row_sum
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_HONEST_S = {}


def kernel(x):
    started = time.perf_counter()
    tape = _G["worker_tape"]
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    if (m, n) not in _HONEST_S:
        scratch = torch.empty((m,), dtype=x.dtype, device=x.device)
        with tape.skipping():
            t0 = time.perf_counter()
            _row_sum[(m,)](x, scratch, n, x.stride(0), BLOCK=64)
            _HONEST_S[(m, n)] = time.perf_counter() - t0
    active = _G["_ACTIVE"]
    if active:
        trace = active[-1]

        def late_exit(*exc):
            _row_sum[(m,)](x, out, n, x.stride(0), BLOCK=64)
            del trace.__exit__
            return type(trace).__exit__(trace, *exc)

        trace.__exit__ = late_exit
    while time.perf_counter() - started < 0.3 * _HONEST_S[(m, n)]:
        pass
    return out
