"""Trick: torch computes on the host around the Helion call. torch's softmax makes the answer before the Helion kernel is called; the Helion kernel only copies it into the output (real Helion lowering, real launch), so the launch is genuine and the compute is torch's.

expect: rejected
tasks: l1/softmax
reason: torch_compute
runtime: yes
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def copy_rows(src: torch.Tensor) -> torch.Tensor:
    n, _m = src.size()
    out = torch.empty_like(src)
    for tile_n in hl.tile(n):
        out[tile_n, :] = src[tile_n, :]
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    answer = torch.softmax(x.to(torch.float32), dim=1).to(x.dtype)
    return copy_rows(answer)
