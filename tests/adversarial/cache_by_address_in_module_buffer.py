"""Trick: remember answers by the inputs' address and first values. Every call's inputs sit at the same addresses; the late calls repeat one trial's inputs hundreds of times. The first call on an input computes honestly and copies its answer into a module-level buffer; a later call whose inputs start with the same values (read through an `__array_interface__` view: no hooked method) only copies the remembered answer out of that buffer, with a copy kernel.

expect: rejected
tasks: l1/softmax
late_calls: yes
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


_REMEMBERED = {}


def _head(x):
    view = {"data": (x.data_ptr(), True), "shape": (min(8, x.numel()),), "typestr": {torch.float32: "<f4", torch.float16: "<f2"}[x.dtype], "version": 3}
    return bytes(np.asarray(type("V", (), {"__array_interface__": view})()).tobytes())


def kernel(x):
    x = x.contiguous()
    key = (x.data_ptr(), tuple(x.shape), x.dtype, _head(x))
    out = torch.empty_like(x)
    if key in _REMEMBERED:
        _copy[(triton.cdiv(x.numel(), 1024),)](_REMEMBERED[key], out, x.numel(), BLOCK=1024)
        return out
    rows, cols = x.reshape(-1, x.shape[-1]).shape
    _softmax_rows[(rows,)](x, out, cols, cols, cols, BLOCK=triton.next_power_of_2(cols))
    keep = torch.empty_like(out)
    _copy[(triton.cdiv(x.numel(), 1024),)](out, keep, x.numel(), BLOCK=1024)
    _REMEMBERED[key] = keep
    return out
