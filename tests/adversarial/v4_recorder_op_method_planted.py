"""Trick: plant a method on the recorder object. The tape recorder of the call in progress (reached through a tripwire's globals) gets an instance attribute `op` that calls the real method and then relabels the step it appended as "aten.clone": every op torch runs for the layer norm after that is recorded under a plumbing label while the witness executes the real overloads. No class or module attribute changes, so the tamper fingerprint sees nothing; the in-process op trace is emptied. A one-element launch is the alibi.

expect: rejected
tasks: l1/layer_norm
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


def kernel(x, weight, bias):
    recorder = _G["worker_tape"]._CURRENT[0]
    if recorder is not None:
        real = type(recorder).op

        def op(func, args, kwargs, result):
            real(recorder, func, args, kwargs, result)
            if recorder.steps and recorder.steps[-1].kind == "op":
                recorder.steps[-1].packet = "aten.clone"

        recorder.op = op
    out = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
    _touch[(1,)](out, 1, BLOCK=2)
    for trace in _G["_ACTIVE"]:
        trace.ops.clear()
    return out
