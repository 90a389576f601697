import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def quant_rows(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> None:
    m, n = x.size()
    for tile_m in hl.tile(m):
        # The whole row at once; masked tail lanes load as 0 and never raise the absmax.
        row = x[tile_m, :].to(torch.float32)
        amax = torch.amax(torch.abs(row), dim=-1)
        # IEEE-rounded float32 divisions: on GPUs Triton's plain `/` is approximate.
        s = hl.inline_triton("tl.div_rn({0}, tl.full({0}.shape, 127.0, tl.float32))", args=(amax,), output_like=amax)
        s = torch.where(amax > 0, s, 1.0)
        v = hl.inline_triton(
            "tl.div_rn({0}, tl.broadcast_to({1}[:, None], {0}.shape))", args=(row, s), output_like=row
        )
        # torch.round rounds halves to even (lowered to libdevice.nearbyint).
        r = torch.clamp(torch.round(v), -127.0, 127.0)
        q[tile_m, :] = r.to(torch.int8)
        scale[tile_m] = s


def kernel(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = x.contiguous()
    m, n = x.shape
    q = torch.empty((m, n), dtype=torch.int8, device=x.device)
    scale = torch.empty(m, dtype=torch.float32, device=x.device)
    quant_rows(x, q, scale)
    return q, scale
