"""GeGLU with torch.nn.functional.gelu in the Helion device loop.

Helion lowers `F.gelu` (exact, erf form) inside the tile loop through its inductor lowerings,
so the kernel reads like the PyTorch module it replaces.

Style: Helion examples
Task: l1/geglu
Idioms: torch.nn.functional in device code (F.gelu, approximate="none")
"""

import torch
import torch.nn.functional as F
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def geglu_flat(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    (n,) = gate.size()
    out = torch.empty_like(gate)
    for tile in hl.tile(n):
        g = gate[tile].to(torch.float32)
        u = up[tile].to(torch.float32)
        out[tile] = (F.gelu(g, approximate="none") * u).to(out.dtype)
    return out


def kernel(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    gate = gate.contiguous()
    up = up.contiguous()
    return geglu_flat(gate.view(-1), up.view(-1)).view(gate.shape)
