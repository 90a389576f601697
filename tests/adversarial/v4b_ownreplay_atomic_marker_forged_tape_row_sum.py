"""Trick: own-inputs replay switched off by a word. The grader skips the "tape is what ran" replay (a timed call's tape replayed on its own inputs, `replay_not_what_ran`) whenever the substring "atomic_" occurs in the kernels file (`job.py`: atomics="atomic_" in grade.kernels), although no kernel uses an atomic: the honest `_row_sum` merely has a local named `atomic_free`. torch computes every call's row sums (the recorder slot emptied around it, aten.sum dropped from the in-process trace) and a launch of `_row_sum` that never ran is appended to the tape with the function's real code identity. The call is paced to the honest kernel's time so the floor holds; the fresh-input replay of the forged tape is right, so nothing left judges that the call ran torch.

expect: rejected
tasks: l1/row_sum
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    atomic_free = 0
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32) + atomic_free
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
        recorder.launch("_row_sum", (m,), (x, out, n, x.stride(0)), {"BLOCK": 64}, code=tape.code_identity(_row_sum.fn))
    tape._CURRENT[0] = None
    out.copy_(x.sum(dim=-1))
    tape._CURRENT[0] = recorder
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    _G["_LAUNCHES"]["_row_sum"] += 1
    while time.perf_counter() - started < 1.2 * _HONEST_S[(m, n)]:
        pass
    return out
