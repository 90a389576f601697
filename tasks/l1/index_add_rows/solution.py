import torch
import triton
import triton.language as tl


@triton.jit
def _index_add_rows(
    base_ptr, idx_ptr, src_ptr, out_ptr, N, D, W,
    stride_bw, stride_bd, stride_sn, stride_sd, stride_ow, stride_od,
    BLOCK_W: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # Each program owns a [BLOCK_W, BLOCK_D] tile of the output, starts from `base`
    # and scans every index in a fixed order: no atomics, so the result is the same
    # on every run.
    rows = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    out_mask = (rows[:, None] < W) & (cols[None, :] < D)
    acc = tl.load(base_ptr + rows[:, None] * stride_bw + cols[None, :] * stride_bd, mask=out_mask, other=0.0).to(tl.float32)
    for n0 in range(0, N, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        idx = tl.load(idx_ptr + offs_n, mask=offs_n < N, other=-1)
        s_mask = (offs_n[:, None] < N) & (cols[None, :] < D)
        s = tl.load(src_ptr + offs_n[:, None] * stride_sn + cols[None, :] * stride_sd, mask=s_mask, other=0.0)
        # One-hot [BLOCK_W, BLOCK_N] selection; the dot adds the matching source rows.
        onehot = (rows[:, None] == idx[None, :]).to(tl.float32)
        acc = tl.dot(onehot, s.to(tl.float32), acc, input_precision="ieee")
    tl.store(out_ptr + rows[:, None] * stride_ow + cols[None, :] * stride_od, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def kernel(base: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    W, D = base.shape
    N = index.shape[0]
    out = torch.empty_like(base)
    BLOCK_W, BLOCK_D, BLOCK_N = 32, 64, 64
    grid = (triton.cdiv(W, BLOCK_W), triton.cdiv(D, BLOCK_D))
    _index_add_rows[grid](
        base, index, src, out, N, D, W,
        base.stride(0), base.stride(1), src.stride(0), src.stride(1), out.stride(0), out.stride(1),
        BLOCK_W=BLOCK_W, BLOCK_D=BLOCK_D, BLOCK_N=BLOCK_N,
    )
    return out
