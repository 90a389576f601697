"""Trick: edit the evidence in place. The worker's launch counter, the trace in force and the tape recorder are ordinary objects of its op-trace module, reached through the globals of the tripwire it installed on `Tensor.numpy`: the call computes with torch, clears the trace's op counts, stops the tape, and counts a launch that never happened. The containers keep their identity, so a fingerprint of identities sees nothing.

expect: rejected
tasks: l1/row_sum
runtime: yes
"""

import torch

_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    tape = _G.get("worker_tape")
    if tape is not None:
        tape._CURRENT[0] = None
    out = x.sum(dim=-1)
    for trace in _G["_ACTIVE"]:
        trace.ops.clear()
    _G["_LAUNCHES"]["_row_sum"] += 1
    return out
