import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4, 128], num_warps=4), static_shapes=True)
def row_sum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        # Rows can be long: walk the row in blocks with a float32 accumulator.
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            acc = acc + x[tile_m, tile_n].to(torch.float32).sum(dim=-1)
        out[tile_m] = acc.to(out.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return row_sum(x.contiguous())
