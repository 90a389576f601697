import torch
import triton
import triton.language as tl


@triton.jit
def _masked_mean_pool(
    hidden_ptr, mask_ptr, out_ptr, L, H,
    stride_hb, stride_hl, stride_hh, stride_mb, stride_ml, stride_ob, stride_oh,
    BLOCK_L: tl.constexpr, BLOCK_H: tl.constexpr,
):
    # One program per (row, column block): walk the row's positions BLOCK_L at a time, summing
    # the masked hidden states and the mask in float32; padded positions count as 0.
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    col_mask = cols < H
    acc = tl.zeros((BLOCK_L, BLOCK_H), dtype=tl.float32)
    count = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        pos = l0 + tl.arange(0, BLOCK_L)
        pos_mask = pos < L
        keep = tl.load(mask_ptr + row * stride_mb + pos * stride_ml, mask=pos_mask, other=0).to(tl.float32)
        tile_mask = pos_mask[:, None] & col_mask[None, :]
        values = tl.load(hidden_ptr + row * stride_hb + pos[:, None] * stride_hl + cols[None, :] * stride_hh, mask=tile_mask, other=0.0)
        acc += values.to(tl.float32) * keep[:, None]
        count += keep
    total = tl.sum(acc, axis=0)
    n = tl.maximum(tl.sum(count, axis=0), 1e-9)
    tl.store(out_ptr + row * stride_ob + cols * stride_oh, total / n, mask=col_mask)


def kernel(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    B, L, H = hidden.shape
    out = torch.empty((B, H), dtype=torch.float32, device=hidden.device)
    BLOCK_L = 32
    BLOCK_H = min(triton.next_power_of_2(H), 128)
    grid = (B, triton.cdiv(H, BLOCK_H))
    _masked_mean_pool[grid](
        hidden, mask, out, L, H,
        hidden.stride(0), hidden.stride(1), hidden.stride(2), mask.stride(0), mask.stride(1), out.stride(0), out.stride(1),
        BLOCK_L=BLOCK_L, BLOCK_H=BLOCK_H,
    )
    return out
