"""Trick: make the witness's GPU compile run out the clock. Every call launches a tiny kernel 300 times, each with a new constexpr value (a counter across calls), which costs the interpreter almost nothing but is 300 new specializations per call for the witness to compile for sm_90 before it can replay anything. torch computes the answer (dropped from the op trace); the replay would show it, but the grade ends `timeout` first.

expect: rejected, wrong_answer, compile_error
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _spin(out_ptr, C: tl.constexpr):
    v = tl.load(out_ptr)
    for i in tl.static_range(8):
        v = v * 1.0 + (C - C) * i
    tl.store(out_ptr, v)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_COUNT = [0]


def kernel(x, y):
    out = x + y
    for i in range(300):
        _COUNT[0] += 1
        _spin[(1,)](out, C=_COUNT[0])
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.add", None)
    recorder = _G["worker_tape"]._CURRENT[0]
    if recorder is not None:
        for step in recorder.steps:
            if step.kind == "op" and step.packet == "aten.add":
                step.packet = "aten.clone"
    return out
