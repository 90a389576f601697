import torch
import triton
import triton.language as tl


@triton.jit
def _segment_sum(
    values_ptr, offsets_ptr, out_ptr, D,
    stride_vt, stride_vd, stride_os, stride_od,
    BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program per (segment, column block): walk the segment's rows in BLOCK_R
    # steps, accumulating in float32; an empty segment never enters the loop and
    # stores zeros.
    seg = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols < D
    start = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    acc = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
    for r0 in range(start, end, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        tile_mask = (rows[:, None] < end) & col_mask[None, :]
        v = tl.load(values_ptr + rows[:, None] * stride_vt + cols[None, :] * stride_vd, mask=tile_mask, other=0.0)
        acc += v.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + seg * stride_os + cols * stride_od, total.to(out_ptr.dtype.element_ty), mask=col_mask)


def kernel(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    D = values.shape[1]
    S = offsets.shape[0] - 1
    out = torch.empty((S, D), dtype=values.dtype, device=values.device)
    BLOCK_R = 32
    BLOCK_D = min(triton.next_power_of_2(D), 128)
    grid = (S, triton.cdiv(D, BLOCK_D))
    _segment_sum[grid](
        values, offsets, out, D,
        values.stride(0), values.stride(1), out.stride(0), out.stride(1),
        BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D,
    )
    return out
