"""Trick: buy the numeric status for a torch answer. The grader reads "atomic_" anywhere in the kernels file as "the kernels use float atomics" (here only a local's name), which both skips the own-inputs replay and widens what a failed fresh-input replay may miss by and still be called rounding (ATOMICS_MARGIN, 16x the allowance, instead of an accusation). torch computes every call's row sums (kept off the tape and the in-process trace), so the calls pass their own checks; the forged tape names `_row_sum_near`, a kernel that never ran and is off by about 6x the normwise allowance. The fresh replay misses by a "rounding-sized" margin: `wrong_answer` with a hint instead of `rejected` for a submission whose answers all came from torch.

expect: rejected
tasks: l1/row_sum
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum_near(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    atomic_free = 1.00006
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, (tl.sum(acc, axis=0) * atomic_free).to(out_ptr.dtype.element_ty))


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
            _row_sum_near[(m,)](x, scratch, n, x.stride(0), BLOCK=64)
            _HONEST_S[(m, n)] = time.perf_counter() - t0
    if recorder is not None:
        recorder.launch("_row_sum_near", (m,), (x, out, n, x.stride(0)), {"BLOCK": 64}, code=tape.code_identity(_row_sum_near.fn))
    tape._CURRENT[0] = None
    out.copy_(x.sum(dim=-1))
    tape._CURRENT[0] = recorder
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    _G["_LAUNCHES"]["_row_sum_near"] += 1
    while time.perf_counter() - started < 1.2 * _HONEST_S[(m, n)]:
        pass
    return out
