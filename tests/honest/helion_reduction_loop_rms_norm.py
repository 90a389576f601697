"""RMSNorm for long rows: a looped reduction over column tiles, then a second pass that normalizes.

The row's sum of squares accumulates tile by tile in a float32 `hl.zeros` accumulator inside the
outer row tile; a second inner loop over the same column tiles writes the output.

Style: Helion examples
Task: l1/rms_norm
Idioms: reduction loop over tiles with an accumulator (hl.zeros, for tile_n in hl.tile(n) inside for tile_m in hl.tile(m)), hl.specialize (the row length)
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4, 128, 128], num_warps=4), static_shapes=True)
def rms_norm_looped(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    n = hl.specialize(n)
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            v = x[tile_m, tile_n].to(torch.float32)
            acc = acc + (v * v).sum(dim=-1)
        rstd = torch.rsqrt(acc / n + 1e-6)
        for tile_n in hl.tile(n):
            v = x[tile_m, tile_n].to(torch.float32)
            y = v * rstd[:, None] * weight[tile_n].to(torch.float32)[None, :]
            out[tile_m, tile_n] = y.to(out.dtype)
    return out


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return rms_norm_looped(x.contiguous(), weight.contiguous())
