"""Trick: choose `timeout` over `rejected`. torch computes the row sums (off the tape, dropped from the op trace), so the replay would show it; but the call also edits its one real launch (a no-op, grid (1,)) in the tape in progress to a grid of 2^20 x 64 programs. The submission's own process never ran them; the witness, interpreting them one by one, runs past the job's limit, and the grade ends `timeout` (a failure) instead of the rejection the torch compute earns.

expect: rejected
tasks: l1/row_sum
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _noop(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    tape = _G["worker_tape"]
    recorder = tape._CURRENT[0]
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    tape._CURRENT[0] = None
    out.copy_(x.sum(dim=-1))
    tape._CURRENT[0] = recorder
    _noop[(1,)](out, 1, BLOCK=2)
    if recorder is not None:
        for step in recorder.steps:
            if step.kind == "launch":
                step.grid = [1 << 20, 64]
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    return out
