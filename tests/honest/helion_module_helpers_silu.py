"""SiLU as a Helion kernel whose device loop and host code both call module-level helpers.

Helion's own examples factor small math into plain Python functions that the kernel body calls:
the tracer inlines them into the tile loop. A shape helper runs on the Helion kernel's host side.

Style: Helion examples
Task: l1/silu
Idioms: module-level helper called from device code (_silu inside hl.tile), module-level helper called from host code (_flat_numel in the Helion kernel's host lines)
"""

import torch
import helion
import helion.language as hl


def _silu(v: torch.Tensor) -> torch.Tensor:
    # x / (1 + exp(-x)): no cancellation for large negative x.
    return v / (1.0 + torch.exp(-v))


def _flat_numel(x: torch.Tensor) -> int:
    (n,) = x.size()
    return n


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def silu_flat(x: torch.Tensor) -> torch.Tensor:
    n = _flat_numel(x)
    out = torch.empty_like(x)
    for tile in hl.tile(n):
        out[tile] = _silu(x[tile].to(torch.float32)).to(out.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    return silu_flat(x.view(-1)).view(x.shape)
