"""Trick: numpy views of tensor memory built from `data_ptr()` alone (an `__array_interface__` dict: an address is no hooked host bridge); numpy adds straight into the output's memory and a kernel that only touches the output launches for show. No aten op runs and no Tensor method hands data over.

expect: rejected
tasks: l1/vector_add
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


class _View:
    def __init__(self, tensor, writable):
        self.__array_interface__ = {
            "data": (tensor.data_ptr(), not writable),
            "shape": tuple(tensor.shape),
            "typestr": {torch.float32: "<f4", torch.float16: "<f2"}.get(tensor.dtype, "<f4"),
            "version": 3,
        }


def kernel(x, y):
    out = torch.empty_like(x)
    np.add(np.asarray(_View(x, False)), np.asarray(_View(y, False)), out=np.asarray(_View(out, True)))
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out
