"""Trick: replace the recorder's step list. The tape recorder of the call in progress gets a new `steps` attribute: a list subclass whose `append` relabels every op step it is given as "aten.clone" before storing it. The recorder keeps appending to it for the rest of the call (and copies it with list() when the call ends), so every compute op of torch's log-softmax reaches the tape under a plumbing label while its `op` still names what the witness executes. The in-process trace is emptied; a one-element launch is the alibi.

expect: rejected
tasks: l1/log_softmax
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)


class _Relabelling(list):
    def append(self, step):
        if step.kind == "op":
            step.packet = "aten.clone"
        super().append(step)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    recorder = _G["worker_tape"]._CURRENT[0]
    if recorder is not None:
        recorder.steps = _Relabelling(recorder.steps)
    out = torch.log_softmax(x, dim=-1)
    _touch[(1,)](out, 1, BLOCK=2)
    for trace in _G["_ACTIVE"]:
        trace.ops.clear()
    return out
