"""Trick: a dispatch mode of the submission's own, entered inside the call on top of the grader's trace, answers the output's allocation (`aten.empty_like`) itself with a tensor numpy has already filled with the sum (through `__array_interface__` views), without forwarding the op: the trace below never sees the allocation, and the kernel that launches only touches the output.

expect: rejected
tasks: l1/vector_add
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import TorchDispatchMode


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


class _View:
    def __init__(self, tensor, writable=False):
        self.__array_interface__ = {"data": (tensor.data_ptr(), not writable), "shape": tuple(tensor.shape), "typestr": "<f4", "version": 3}


_SPARE = {}


class _Answering(TorchDispatchMode):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.empty_like.default:
            key = tuple(self.x.shape)
            if key not in _SPARE:
                _SPARE[key] = func(*args, **(kwargs or {}))
            out = _SPARE[key]
            np.add(np.asarray(_View(self.x)), np.asarray(_View(self.y)), out=np.asarray(_View(out, True)))
            return out
        return func(*args, **(kwargs or {}))


def kernel(x, y):
    with _Answering(x, y):
        out = torch.empty_like(x)
    _touch[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out
