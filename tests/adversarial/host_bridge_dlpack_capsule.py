"""Trick: tensor memory to numpy through a DLPack capsule made by torch's C entry point (`torch._C._to_dlpack`, reached by a built name), not through any hooked Tensor method; numpy sums the rows into a numpy view of the output made the same way, and a kernel that touches the output launches for show. No aten op computes anything.

expect: rejected
tasks: l1/row_sum
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


_C = getattr(torch, "_" + "C")


class _Capsule:
    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None, **kwargs):
        return _C._to_dlpack(self.tensor)

    def __dlpack_device__(self):
        return (1, 0)


class _Writable:
    def __init__(self, tensor, dtype):
        self.__array_interface__ = {"data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape), "typestr": dtype.str, "version": 3}


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    rows = np.from_dlpack(_Capsule(x))
    # numpy's DLPack import is read-only: write through an array interface on the output's address.
    target = np.asarray(_Writable(out, rows.dtype))
    target[...] = rows.astype(np.float64).sum(axis=-1).astype(target.dtype)
    _touch[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    return out
