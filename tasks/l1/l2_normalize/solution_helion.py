import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4, 128, 128], num_warps=4), static_shapes=True)
def l2_normalize_rows(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        # Rows can be long (20000+): first pass, the float32 sum of squares in blocks.
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            v = x[tile_m, tile_n].to(torch.float32)
            acc = acc + torch.sum(v * v, dim=-1)
        # x / max(norm, eps): an all-zero row gives zeros, a tiny row is divided exactly.
        norm = torch.clamp_min(torch.sqrt(acc), 1e-12)
        # Second pass: scale the row block by block.
        for tile_n in hl.tile(n):
            v = x[tile_m, tile_n].to(torch.float32)
            out[tile_m, tile_n] = (v / norm[:, None]).to(out.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return l2_normalize_rows(x.contiguous())
