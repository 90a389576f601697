"""Trick: a launch that never ran, paced under the floor. torch computes the row sums (kept off the tape by emptying the recorder slot, and dropped from the in-process op trace); the call appends to the tape in progress a launch of the file's honest `_row_sum` that never ran. It then busy-waits until 0.3x of what the honest kernel takes (measured once per shape, with the recorder told to skip that run), just above the 0.2 CPU floor: the replay computes the right answer with the claimed kernel, and the reported time is about 3x faster than the kernel it names.

expect: rejected
tasks: l1/row_sum
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_HONEST_S = {}


def kernel(x):
    started = time.perf_counter()
    tape = _G["worker_tape"]
    recorder = tape._CURRENT[0]
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    if (m, n) not in _HONEST_S:
        scratch = torch.empty((m,), dtype=x.dtype, device=x.device)
        with tape.skipping():
            t0 = time.perf_counter()
            _row_sum[(m,)](x, scratch, n, x.stride(0), BLOCK=64)
            _HONEST_S[(m, n)] = time.perf_counter() - t0
    if recorder is not None:
        recorder.launch("_row_sum", (m,), (x, out, n, x.stride(0)), {"BLOCK": 64})
    tape._CURRENT[0] = None
    out.copy_(x.sum(dim=-1))
    tape._CURRENT[0] = recorder
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    _G["_LAUNCHES"]["_row_sum"] += 1
    while time.perf_counter() - started < 0.3 * _HONEST_S[(m, n)]:
        pass
    return out
