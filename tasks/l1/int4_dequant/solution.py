import torch
import triton
import triton.language as tl


@triton.jit
def _int4_dequant(
    packed_ptr, scales_ptr, zeros_ptr, out_ptr, N, K, G,
    stride_pn, stride_sn, stride_zn, stride_on,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # One program per (row block, column block) of the output: each column k reads byte k // 2
    # and takes its low nibble for even k, its high nibble for odd k; its group is k // G.
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows < N
    col_mask = cols < K
    tile_mask = row_mask[:, None] & col_mask[None, :]
    byte = tl.load(packed_ptr + rows[:, None] * stride_pn + (cols // 2)[None, :], mask=tile_mask, other=0).to(tl.int32)
    code = tl.where((cols % 2 == 0)[None, :], byte & 0xF, byte >> 4)
    group = cols // G
    zero = tl.load(zeros_ptr + rows[:, None] * stride_zn + group[None, :], mask=tile_mask, other=0).to(tl.int32)
    scale = tl.load(scales_ptr + rows[:, None] * stride_sn + group[None, :], mask=tile_mask, other=0.0).to(tl.float32)
    value = (code - zero).to(tl.float32) * scale
    tl.store(out_ptr + rows[:, None] * stride_on + cols[None, :], value.to(out_ptr.dtype.element_ty), mask=tile_mask)


def kernel(packed: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    N, half = packed.shape
    K = 2 * half
    G = K // scales.shape[1]
    out = torch.empty((N, K), dtype=scales.dtype, device=packed.device)
    BLOCK_N, BLOCK_K = 16, 128
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(K, BLOCK_K))
    _int4_dequant[grid](
        packed, scales, zeros, out, N, K, G,
        packed.stride(0), scales.stride(0), zeros.stride(0), out.stride(0),
        BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out
