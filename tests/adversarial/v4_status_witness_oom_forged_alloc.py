"""Trick: run the witness out of memory. torch computes the row sums (dropped from the op trace). The call allocates an empty scratch tensor and then rewrites that allocation's size in the tape in progress to 2^34 float32 elements (64 GiB): the witness allocates it and poisons every byte before anything is judged, and the sandbox's memory limit kills it. A killed witness is a crash or an infrastructure failure, not the rejection the torch compute earns.

expect: rejected
tasks: l1/row_sum
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    scratch = torch.empty((1,), dtype=torch.float32, device=x.device)
    recorder = _G["worker_tape"]._CURRENT[0]
    if recorder is not None:
        for step in recorder.steps:
            if step.kind == "op" and step.op.startswith("aten::empty") and step.args and step.args[0].kind == "list":
                step.args[0].items[0].integer = 1 << 34
    out = x.sum(dim=-1)
    _touch[(1,)](out, 1, BLOCK=2)
    _touch[(1,)](scratch, 1, BLOCK=2)
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    return out
