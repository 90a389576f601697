"""Trick: Helion's eager reference mode. `ref_mode=helion.RefMode.EAGER` in the decorator's settings makes Helion run the kernel body as plain PyTorch on the real tensors (no Triton is generated or launched); the config is pinned, so nothing would autotune.

expect: rejected
tasks: l1/softmax
runtime: yes
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True, ref_mode=helion.RefMode.EAGER)
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :].to(torch.float32), dim=1).to(x.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax_rows(x)
