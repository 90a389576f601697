"""Trick: patching the grader's own clock. The worker runs as __main__ and reads its timer from the module global `_now` at every call; torch.sys.modules (sys as an attribute of torch, no forbidden import) reaches __main__, and a plain attribute assignment on a local name replaces `_now` by a clock that advances a nanosecond per reading. The kernel is honest; its timings (and speedup) are forged.

expect: rejected
tasks: l1/vector_add
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl

_ticks = [0.0]


def _fake_now():
    _ticks[0] += 1e-9
    return _ticks[0]


for _name in ("__main__", "gym.worker", "gym.worker.submission"):
    _host = torch.sys.modules.get(_name)
    if _host is not None and hasattr(_host, "_now"):
        _host._now = _fake_now


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
