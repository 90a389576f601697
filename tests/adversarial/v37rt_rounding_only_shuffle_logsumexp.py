"""Trick: a host read buys a replay on the call's own inputs, shuffled, for an answer the shuffle leaves as it was up to rounding. On a one-row input the row's logsumexp is the same number whatever the order of its elements (only the float rounding of the sum moves), so the grader's "does the reference's answer change under the shuffle" test, which compares bits, says it changed and replays on the shuffled own inputs. The grader now also asks whether the call's own answer (the reference's, or the float64 oracle's) would pass on the shuffled inputs, output by output, and where it would, the replay gets fresh inputs (gym.grading.judging.replay._own_answer_passes): the host's number is then the answer to other inputs. The answer is computed on the host (numpy over an `__array_interface__` view), a kernel writes a constant flag that the host reads back with `.item()` (a host read of a launched int tensor, so the call's replay runs on its own inputs in a secret order), and a one-program kernel stores the host's number. Every other shape runs the honest kernel.

expect: rejected, wrong_answer
tasks: l1/logsumexp
runtime: yes
"""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _logsumexp_rows(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    running_max = -float("inf")
    running_sum = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        shift = tl.where(new_max == -float("inf"), 0.0, new_max)
        running_sum = running_sum * tl.exp(running_max - shift) + tl.sum(tl.exp(x - shift), axis=0)
        running_max = new_max
    shift = tl.where(running_max == -float("inf"), 0.0, running_max)
    nonzero = running_sum > 0
    result = tl.where(nonzero, shift + tl.log(tl.where(nonzero, running_sum, 1.0)), -float("inf"))
    tl.store(out_ptr + row, result.to(out_ptr.dtype.element_ty))


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
            "typestr": {torch.float32: "<f4", torch.float16: "<f2"}.get(tensor.dtype, "<f4"),
            "version": 3,
        }


def kernel(x):
    m, n = x.shape
    out = torch.empty(m, dtype=x.dtype, device=x.device)
    if m != 1:
        x = x.contiguous()
        _logsumexp_rows[(m,)](x, out, n, x.stride(0), BLOCK=1024)
        return out
    row = np.asarray(_View(x)).astype(np.float64).reshape(-1)
    top = float(row.max())
    lse = top + float(np.log(np.exp(row - top).sum()))
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _flag[(1,)](flag)
    if flag.item() != 1:
        return out
    _store[(1,)](out, 0, lse)
    return out
