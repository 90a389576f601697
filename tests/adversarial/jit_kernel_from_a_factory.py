"""Trick: a kernel made by a factory at run time, out of any file-level definition: its body closes over a numpy array the factory built from the inputs on the host (through an `__array_interface__` view), and the interpreter reads the closure as Python. Nothing of it can be replayed from the file's own jit functions.

expect: rejected
tasks: l1/vector_add
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {"data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape), "typestr": "<f4", "version": 3}


def _make(x, y):
    answer = (np.asarray(_View(x)) + np.asarray(_View(y))).astype(np.float32)

    @triton.jit
    def _store(out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)

    return _store, answer


def kernel(x, y):
    out = torch.empty_like(x)
    launch, answer = _make(x, y)
    np.asarray(_View(out))[...] = answer
    launch[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out
