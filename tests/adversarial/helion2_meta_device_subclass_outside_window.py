"""Trick: torch compute on views that say they are on the meta device, outside Helion's compile window. `kernel()` adds with torch into `out` through `as_subclass` views of a `torch.Tensor` subclass whose `device` property answers `meta` (the compile window's fake-tensor test reads `tensor.device`), sets a done-flag the same way, and the Helion kernel then stores nothing in the call (it computes in the witness, whose allocations are random bytes; IEEE addition is bit-exact). What stops it: outside a compile window every op counts whatever its tensors claim (`torch_compute:aten.add`). (Inside a compile window the same views were not counted: see the second Helion red team's report.)

expect: rejected
tasks: l1/vector_add
reason: torch_compute
runtime: yes
"""

import torch
import helion
import helion.language as hl


class _Meta(torch.Tensor):
    @property
    def device(self):
        return torch.device("meta")


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add_unless_done(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, flag: torch.Tensor) -> torch.Tensor:
    for tile in hl.tile(x.size(0)):
        done = flag[0]
        if done != 1234567:
            out[tile] = x[tile] + y[tile]
    return out


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    flag = torch.empty(1, dtype=torch.int32, device=x.device)
    torch.add(x.as_subclass(_Meta), y.as_subclass(_Meta), out=out.as_subclass(_Meta))
    flag.as_subclass(_Meta).fill_(1234567)
    return add_unless_done(x, y, out, flag)
