"""Vector add: a Helion kernel launched from a torch.nn.Module's forward, the entry point a functools.partial.

Style: Helion examples
Task: l1/vector_add
Idioms: torch.nn Module wrapper whose forward launches the kernel (a Helion kernel), functools.partial entry point
"""

import functools

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add_flat(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    (n,) = x.size()
    out = torch.empty_like(x)
    for tile in hl.tile(n):
        out[tile] = x[tile] + y[tile]
    return out


class HelionAdd(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        return add_flat(x.view(-1), y.view(-1)).view(x.shape)


def _launch(module: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return module(x, y)


kernel = functools.partial(_launch, HelionAdd())
