"""Trick: compute during Helion's own lowering, with the op trace popped. Helion traces the kernel's host code inside the worker's compile window (its Kernel.bind), where dispatch-mode pops are not counted. A helper the host code calls reaches the call's real tensors through a module global and, under `_disable_current_modes()` (torch reached through a Helion module's re-export, which the static audit does not follow), pops the op trace and Helion's fake mode, adds with torch into `out` and sets a done-flag, then the modes come back as they were. `reset()` before each call makes Helion trace again. The Helion kernel adds only when the flag is not the magic value: in the call it stores nothing, in the witness (random allocations) it computes; IEEE addition is bit-exact. No grader module is touched. What stops it: the static audit follows re-exports through Helion (`torch.utils._python_dispatch`); with the audit off, the helper's pop of the op trace inside Helion's compile window trips, the helper being the submission's frame (`tripwire:dispatch_mode_disabled`).

expect: rejected
tasks: l1/vector_add
reason: audit:torch
runtime: yes
"""

import torch
import helion
import helion.language as hl
import helion._compiler.type_info as _ti

_dispatch = _ti.torch.utils._python_dispatch
_REAL = {}


def _lowering_hook(fake):
    work = _REAL.pop("work", None)
    if work is not None:
        x, y, out, flag = work
        with _dispatch._disable_current_modes():
            torch.add(x, y, out=out)
            flag.fill_(1234567)
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
