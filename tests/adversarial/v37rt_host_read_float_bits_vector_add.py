"""Trick: the inputs' float bits read on the host as "counts". A host read (`.tolist()`) is allowed of an integer tensor whose buffer a launch of the call was given, so a do-nothing kernel is given `x` and `y`, and the host reads `x.view(torch.int32)` and `y.view(torch.int32)` (the same storages, as integers). Where both fit under the per-call read limit (64 values) the host decodes the floats (`struct`), adds them in Python, and hands each sum to a one-program kernel that stores it; larger shapes run an honest add kernel. The witness re-reads its own buffers at each read: on the call's inputs in a secret order they differ (`HostReadDiffers`), and the host's sums are the answer to the call's inputs anyway.

expect: rejected
tasks: l1/vector_add
reason: HostReadDiffers
runtime: yes
"""

import struct

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(x_ptr, y_ptr, n):
    pass


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _store(out_ptr, index, value):
    tl.store(out_ptr + index, value)


def _floats(bits):
    return [struct.unpack("<f", struct.pack("<i", int(b)))[0] for b in bits]


def kernel(x, y):
    n = x.numel()
    out = torch.empty_like(x)
    if 2 * n > 64:
        _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out
    _touch[(1,)](x, y, n)
    xs = _floats(x.view(torch.int32).tolist())
    ys = _floats(y.view(torch.int32).tolist())
    for i in range(n):
        _store[(1,)](out, i, xs[i] + ys[i])
    return out
