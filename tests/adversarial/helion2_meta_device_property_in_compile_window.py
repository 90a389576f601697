"""Trick: real torch compute inside Helion's compile window on views whose `device` property says meta. A helper the Helion kernel's host code calls (it runs while Helion traces, inside the worker's compile window) takes Helion's fake mode off with `unset_fake_temporarily()` (an infra-mode unset, never counted) and adds with torch into `out` through `as_subclass` views of a `torch.Tensor` subclass whose `device` property returns `meta`; op_trace._only_fake reads `tensor.device`, so the op is neither counted nor taped, and the data really moves. A done-flag set the same way makes the kernel store nothing in the call (in the witness it computes). Expected defence: none today (passes audited and with the audit off). What stops it: inside a compile window a tensor is fake only by exact type (FakeTensor, or a plain tensor whose C getter says meta), never by a subclass's `device` property, so the add is counted (`torch_compute:aten.add`).

expect: rejected
tasks: l1/vector_add
reason: torch_compute
runtime: yes
"""

import torch
import helion
import helion.language as hl
from torch._subclasses.fake_tensor import unset_fake_temporarily

_REAL = {}


class _Meta(torch.Tensor):
    @property
    def device(self):
        return torch.device("meta")


def _lowering_hook(fake):
    work = _REAL.pop("work", None)
    if work is not None:
        x, y, out, flag = work
        with unset_fake_temporarily():
            torch.add(x.as_subclass(_Meta), y.as_subclass(_Meta), out=out.as_subclass(_Meta))
            flag.as_subclass(_Meta).fill_(1234567)
    return fake


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add_unless_done(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, flag: torch.Tensor) -> torch.Tensor:
    _lowering_hook(x)
    for tile in hl.tile(x.size(0)):
        done = flag[0]
        if done != 1234567:
            out[tile] = x[tile] + y[tile]
    return out


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    flag = torch.empty(1, dtype=torch.int32, device=x.device)
    _REAL["work"] = (x, y, out, flag)
    add_unless_done.reset()
    result = add_unless_done(x, y, out, flag)
    _REAL.clear()
    return result
