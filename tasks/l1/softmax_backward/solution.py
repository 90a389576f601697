import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_backward_rows(y_ptr, dy_ptr, dx_ptr, n_cols, y_row_stride, dy_row_stride, dx_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Masked lanes load as 0 and add nothing to the row dot product.
    y = tl.load(y_ptr + row * y_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=0)
    dx = y * (dy - dot)
    tl.store(dx_ptr + row * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def kernel(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    y = y.contiguous()
    dy = dy.contiguous()
    m, n = y.shape
    dx = torch.empty_like(y)
    block = triton.next_power_of_2(n)
    # One row per program; wide rows get more warps so each thread holds fewer elements.
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    _softmax_backward_rows[(m,)](y, dy, dx, n, y.stride(0), dy.stride(0), dx.stride(0), BLOCK=block, num_warps=warps)
    return dx
