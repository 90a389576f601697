"""Trick: a host read of a constant buys a replay on the call's own inputs, for an answer the shuffle cannot change. A histogram is the same whatever the order of its values, so if the witness replayed the call on its own inputs in a secret order, counts computed on the host would still be right there. The counts are computed on the host (numpy over an `__array_interface__` view), a kernel writes a flag the host reads back with `.item()` (an allowed host read, the same on any inputs), and one-program kernels store each count as a scalar argument. The grader must see that the reference's answer on the shuffled inputs is the call's own (no evidence) and replay on fresh inputs instead, where the host's counts are wrong.

expect: rejected
tasks: l1/histogram
reason: replay_mismatch
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _flag(flag_ptr):
    tl.store(flag_ptr, 1)


@triton.jit
def _store(out_ptr, index, value):
    tl.store(out_ptr + index, value)


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {
            "data": (tensor.data_ptr(), True),
            "shape": tuple(tensor.shape),
            "strides": tuple(s * tensor.element_size() for s in tensor.stride()),
            "typestr": {torch.int64: "<i8", torch.int32: "<i4"}.get(tensor.dtype, "<i8"),
            "version": 3,
        }


def kernel(x, num_bins):
    counts = np.bincount(np.asarray(_View(x)).reshape(-1), minlength=num_bins)
    out = torch.zeros((num_bins,), dtype=torch.int64, device=x.device)
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _flag[(1,)](flag)
    if flag.item() != 1:
        return out
    for b in range(num_bins):
        if counts[b]:
            _store[(1,)](out, b, int(counts[b]))
    return out
