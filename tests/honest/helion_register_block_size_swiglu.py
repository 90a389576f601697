"""SwiGLU over the flattened tensor, tiled by a block size registered on the host side.

`hl.register_block_size` names the tile size once (its value comes from the pinned config's
`block_sizes`), and the loop uses it through `hl.tile(..., block_size=...)`, as Helion's
examples do when two loops must share one tile size.

Style: Helion examples
Task: l1/swiglu
Idioms: hl.register_block_size, hl.tile with block_size=
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def swiglu_flat(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    (n,) = gate.size()
    block = hl.register_block_size(n)
    out = torch.empty_like(gate)
    for tile in hl.tile(n, block_size=block):
        g = gate[tile].to(torch.float32)
        u = up[tile].to(torch.float32)
        out[tile] = (g / (1.0 + torch.exp(-g)) * u).to(out.dtype)
    return out


def kernel(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    gate = gate.contiguous()
    up = up.contiguous()
    return swiglu_flat(gate.view(-1), up.view(-1)).view(gate.shape)
