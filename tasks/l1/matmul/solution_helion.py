import torch
import helion
import helion.language as hl


# dot_precision="ieee": full float32 products (Helion's default is TF32, too coarse for the float32 contract).
@helion.kernel(
    config=helion.Config(block_sizes=[32, 32, 32], num_warps=4),
    static_shapes=True,
    dot_precision="ieee",
)
def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    k2, n = b.size()
    assert k == k2, f"size mismatch {k} != {k2}"
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            # Masked K tail loads as zeros; accumulate in float32.
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(out.dtype)
    return out


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a.contiguous(), b.contiguous())
