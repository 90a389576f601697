"""LayerNorm as two Helion kernels: a statistics kernel (mean, rstd per row) and a normalize kernel.

Style: Helion examples
Task: l1/layer_norm
Idioms: two Helion kernels in one file (row statistics, then normalize; both called by kernel)
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def layer_norm_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, _n = x.size()
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    rstd = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mu = torch.mean(row, dim=-1)
        centered = row - mu[:, None]
        var = torch.mean(centered * centered, dim=-1)
        mean[tile_m] = mu
        rstd[tile_m] = torch.rsqrt(var + 1e-5)
    return mean, rstd


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def layer_norm_apply(
    x: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor
) -> torch.Tensor:
    m, _n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        y = (row - mean[tile_m][:, None]) * rstd[tile_m][:, None]
        y = y * weight[None, :].to(torch.float32) + bias[None, :].to(torch.float32)
        out[tile_m, :] = y.to(out.dtype)
    return out


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    mean, rstd = layer_norm_stats(x)
    return layer_norm_apply(x, mean, rstd, weight.contiguous(), bias.contiguous())
