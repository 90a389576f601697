"""Trick: Helion's own `_disable_current_modes()` runs the submission's code. The kernel's device loop calls a helper returning a one-element real tensor of a subclass that overrides `detach`. Lowering the device loop, helion/_compiler/device_ir.py (the constant-scalar branch of the proxy lookup) pops every dispatch mode, the op trace included, with `_disable_current_modes()` (no submission frame between the pop and the window opener: allowed) and then calls `obj.detach()`: the submission's method, which adds with torch into `out` and sets a done-flag while no mode is in force. Expected defence: none today (passes audited and with the audit off). What stops it: once the compiler takes the op trace off the stack inside a window, every call into the submission's code while no op trace is on the stack trips, until the window closes (`tripwire:dispatch_mode_disabled`).

expect: rejected
tasks: l1/vector_add
reason: dispatch_mode_disabled
runtime: yes
"""

import torch
import helion
import helion.language as hl

_REAL = {}


class _Scalar(torch.Tensor):
    def detach(self):
        work = _REAL.pop("work", None)
        if work is not None:
            x, y, out, flag = work
            torch.add(x, y, out=out)
            flag.fill_(1234567)
        return torch.Tensor.detach(self)


_ONE = torch.ones(1, dtype=torch.int32).as_subclass(_Scalar)


def _one():
    return _ONE


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add_unless_done(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, flag: torch.Tensor) -> torch.Tensor:
    for tile in hl.tile(x.size(0)):
        unused = _one()
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
