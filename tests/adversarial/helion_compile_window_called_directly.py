"""Trick: enter the worker's compile window yourself. `op_trace.compiling()` (reached through `sys` re-exported by a Helion module: the static audit now follows re-exports through Helion) stops the mode tripwire from counting pops; inside it `_disable_current_modes()` (reached through `torch` re-exported by Helion) pops the op trace itself, so torch's softmax on the real input runs uncounted and untaped, and the stacks are equal again on exit. The Helion kernel keeps what is already in `out` where a row already sums to one (in the call: torch's answer) and computes softmax only where it does not (in the witness, whose `out` is a fresh allocation). With the audit off, the pop trips the mode tripwire: inside a compile window a pop of the trace itself counts when any of the submission's frames lies between it and the window's opener (here the submission opened the window itself).

expect: rejected
tasks: l1/softmax
reason: audit:sys
runtime: yes
"""

import torch
import helion
import helion.language as hl
import helion._compiler.host_function as _hf

_trace = _hf.sys.modules["gym.worker.op_trace"]
_dispatch = _hf.torch.utils._python_dispatch


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def finish_rows(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    for tile_n in hl.tile(n):
        have = out[tile_n, :].to(torch.float32)
        total = have.sum(dim=1, keepdim=True)
        done = (total > 0.999) & (total < 1.001) & (have.amin(dim=1, keepdim=True) >= 0.0)
        fresh = torch.nn.functional.softmax(x[tile_n, :].to(torch.float32), dim=1)
        out[tile_n, :] = torch.where(done, have, fresh).to(x.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    with _trace.compiling():
        with _dispatch._disable_current_modes():
            out.copy_(torch.softmax(x.to(torch.float32), dim=1).to(x.dtype))
    return finish_rows(x, out)
