import torch
import triton
import triton.language as tl


@triton.jit
def _logsumexp_rows(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    # One row per program, streamed in blocks with an online (running max, rescaled sum) pair.
    row = tl.program_id(0)
    running_max = -float("inf")
    running_sum = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        # A row (so far) of -inf only: shift by 0 instead, so exp(-inf - -inf) never makes NaN.
        shift = tl.where(new_max == -float("inf"), 0.0, new_max)
        running_sum = running_sum * tl.exp(running_max - shift) + tl.sum(tl.exp(x - shift), axis=0)
        running_max = new_max
    shift = tl.where(running_max == -float("inf"), 0.0, running_max)
    # An all -inf row sums to 0: its result is log(0) = -inf.
    nonzero = running_sum > 0
    result = tl.where(nonzero, shift + tl.log(tl.where(nonzero, running_sum, 1.0)), -float("inf"))
    tl.store(out_ptr + row, result.to(out_ptr.dtype.element_ty))


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty(m, dtype=x.dtype, device=x.device)
    _logsumexp_rows[(m,)](x, out, n, x.stride(0), BLOCK=1024)
    return out
