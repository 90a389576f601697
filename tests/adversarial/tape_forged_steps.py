"""Trick: make the tape name what the file does not have. The call computes with torch (its ops cleared from the trace through the tripwire's globals) and appends to the tape in progress an op of a custom library and a launch of a kernel the file never defines, hoping the replay runs whatever the tape names, or gives up quietly.

expect: rejected
tasks: l1/row_sum
runtime: yes
"""

import torch

_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    out = x.sum(dim=-1)
    tape = _G.get("worker_tape")
    recorder = tape.current() if tape is not None else None
    if recorder is not None:
        model = type(recorder.steps[0]) if recorder.steps else None
        recorder.launch("triton_answer_kernel", (1,), (x, out), {})
        if model is not None:
            recorder.steps.append(model.model_validate({**recorder.steps[0].model_dump(), "op": "mylib::answer", "effect": True}))
    for trace in _G["_ACTIVE"]:
        trace.ops.clear()
    _G["_LAUNCHES"]["triton_answer_kernel"] += 1
    return out
