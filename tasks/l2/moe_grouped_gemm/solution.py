import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_gemm(
    x_ptr, offsets_ptr, w_ptr, out_ptr, N, K,
    stride_xs, stride_xk, stride_we, stride_wk, stride_wn, stride_os, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, IEEE: tl.constexpr,
):
    # One program per (expert, column block): walk the expert's rows in BLOCK_M tiles with
    # bounds loaded from offsets (an empty group never enters the loop), each tile a
    # float32-accumulated product with this expert's weight.
    e = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    start = tl.load(offsets_ptr + e)
    end = tl.load(offsets_ptr + e + 1)
    w_base = w_ptr + e.to(tl.int64) * stride_we
    for m0 in range(start, end, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        row_mask = rows < end
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            k_mask = ks < K
            a = tl.load(x_ptr + rows[:, None] * stride_xs + ks[None, :] * stride_xk, mask=row_mask[:, None] & k_mask[None, :], other=0.0)
            b = tl.load(w_base + ks[:, None] * stride_wk + cols[None, :] * stride_wn, mask=k_mask[:, None] & col_mask[None, :], other=0.0)
            if IEEE:
                acc = tl.dot(a, b, acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)
        tl.store(
            out_ptr + rows[:, None] * stride_os + cols[None, :] * stride_on,
            acc.to(out_ptr.dtype.element_ty),
            mask=row_mask[:, None] & col_mask[None, :],
        )


def kernel(x: torch.Tensor, offsets: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    S, K = x.shape
    E, _, N = w.shape
    out = torch.empty((S, N), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64
    grid = (E, triton.cdiv(N, BLOCK_N))
    _grouped_gemm[grid](
        x, offsets, w, out, N, K,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), w.stride(2), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, IEEE=x.dtype == torch.float32,
    )
    return out
