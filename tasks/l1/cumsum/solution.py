import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_rows(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0  # running row total (float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        prefix = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + row * out_row_stride + cols, prefix.to(out_ptr.dtype.element_ty), mask=cols < n_cols)
        # The block total (masked lanes are 0) carries into the next block.
        carry += tl.sum(x, axis=0)


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    _cumsum_rows[(m,)](x, out, n, x.stride(0), out.stride(0), BLOCK=1024)
    return out
