"""Trick: label a matmul as a view. torch's mm step in the tape in progress (reached through a tripwire's globals) gets packet "aten.view" (a view, plumbing) and keeps effect=True, so the witness still executes aten::mm for it; the in-process trace forgets aten.mm. A one-element launch is the alibi.

expect: rejected
tasks: l1/matmul
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(a, b):
    out = a @ b
    _touch[(1,)](out, 1, BLOCK=2)
    recorder = _G["worker_tape"]._CURRENT[0]
    if recorder is not None:
        for step in recorder.steps:
            if step.kind == "op" and step.packet == "aten.mm":
                step.packet = "aten.view"
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.mm", None)
    return out
