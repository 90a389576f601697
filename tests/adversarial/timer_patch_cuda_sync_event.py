"""Trick: timer monkeypatching on the device side. torch.cuda.synchronize becomes a no-op and torch.cuda.Event is replaced by a fake whose elapsed_time is always 1 microsecond, so a device-synchronised or event-based timing would stop the clock before the kernel finished.

expect: rejected
tasks: l1/vector_add
reason: audit:
"""

import torch
import triton
import triton.language as tl


class _FakeEvent:
    def __init__(self, *args, **kwargs):
        pass

    def record(self, *args, **kwargs):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 1e-3


torch.cuda.synchronize = lambda *args, **kwargs: None
torch.cuda.Event = _FakeEvent


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
