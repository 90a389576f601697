"""Trick: the answer rides in the launches' scalar arguments. The row sums are computed on the host (numpy over an `__array_interface__` view), and each is handed to a one-program kernel as a float argument that it stores: every launch is real Triton, every launch writes the output, and no torch op computes.

expect: rejected
tasks: l1/row_sum
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _store(out_ptr, index, value):
    tl.store(out_ptr + index, value)


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {
            "data": (tensor.data_ptr(), True),
            "shape": tuple(tensor.shape),
            "strides": tuple(s * tensor.element_size() for s in tensor.stride()),
            "typestr": {torch.float32: "<f4", torch.float16: "<f2"}.get(tensor.dtype, "<f4"),
            "version": 3,
        }


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    sums = np.asarray(_View(x)).astype(np.float64).sum(axis=-1)
    for row in range(m):
        _store[(1,)](out, row, float(sums[row]))
    return out
