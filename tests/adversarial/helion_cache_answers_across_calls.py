"""Trick: answers cached across calls around a Helion kernel. The first call of each shape runs the (honest) Helion softmax; later calls whose input has the same shape and the same storage address (a fresh input the worker made at a recycled address looks the same) return the cached output without launching anything.

expect: rejected, wrong_answer
tasks: l1/softmax
runtime: yes
"""

import torch
import helion
import helion.language as hl

_CACHE = {}


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :].to(torch.float32), dim=1).to(x.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    key = (tuple(x.shape), x.dtype, x.data_ptr())
    found = _CACHE.get(key)
    if found is not None:
        return found
    out = softmax_rows(x)
    _CACHE[key] = out
    return out
