"""Trick: a tape that tells a better story than the call. The call computes with torch (its ops cleared from the trace in force, reached through the tripwire's globals) and writes into the tape in progress a launch of the file's honest kernel that never ran. Replayed, the claimed kernel really does compute the answer; only how long the call took gives it away.

expect: rejected
tasks: l1/row_sum
reason: timing_not_reproduced
runtime: yes
"""

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


def kernel(x):
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    tape = _G.get("worker_tape")
    recorder = tape.current() if tape is not None else None
    if recorder is not None:
        recorder.launch("_row_sum", (m,), (x, out, n, x.stride(0)), {"BLOCK": 64})
        tape._CURRENT[0] = None
    out.copy_(x.sum(dim=-1))
    for trace in _G["_ACTIVE"]:
        trace.ops.clear()
    _G["_LAUNCHES"]["_row_sum"] += 1
    return out
