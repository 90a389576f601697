"""Trick: take Helion's generated module away before the worker sends it. After every call the file deletes the module Helion wrote into the compile cache (path found through `sys` re-exported by a Helion module; `os.remove` reached through `os` re-exported by one), hoping that a launch whose source cannot be read is left out of the replay rather than failing it. The kernel itself is honest.

expect: rejected
tasks: l1/vector_add
reason: replay_failed
runtime: yes
"""

import torch
import helion
import helion.language as hl
import helion._compiler.host_function as _hf
import helion._compiler.triton.backend as _backend

_modules = _hf.sys.modules


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] + y[tile]
    return out


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = add(x, y)
    run = getattr(add.bind((x, y)), "_run", None)
    path = getattr(_modules.get(getattr(run, "__module__", "")), "__file__", None)
    if path:
        try:
            _backend.os.remove(path)
        except OSError:
            pass
    return out
