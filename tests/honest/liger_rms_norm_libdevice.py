"""RMS norm as Liger-Kernel writes it: rsqrt straight from libdevice, picked by a version gate.

Style: Liger-Kernel
Task: l1/rms_norm
Idioms: libdevice math (unconditional libdevice.rsqrt), packaging version gate on triton.__version__, import operator, functools.reduce over a shape, torch.autograd.Function wrapper called via .apply
"""

import functools
import operator

import torch
import triton
import triton.language as tl
from packaging.version import Version

if Version(triton.__version__) >= Version("3.0.0"):
    from triton.language.extra import libdevice
else:  # Triton 2.x kept the CUDA libdevice under tl.math
    libdevice = tl.math


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0).to(tl.float32)

    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = libdevice.rsqrt(mean_square + eps)
    # Cache rstd for the backward pass.
    tl.store(RSTD_ptr + row_idx, rstd)

    Y_row = X_row * rstd * W_row
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, Y_row.to(Y_ptr.dtype.element_ty), mask=mask)


def rms_norm_forward(X, W, eps):
    shape = X.shape
    n_cols = shape[-1]
    n_rows = functools.reduce(operator.mul, shape[:-1], 1)
    X = X.view(n_rows, n_cols)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_SIZE < 2048 else 8
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, RSTD, n_cols, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps
    )
    return Y.view(*shape), X, RSTD


class LigerRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps):
        Y, X, RSTD = rms_norm_forward(X.contiguous(), W.contiguous(), eps)
        ctx.eps = eps
        ctx.save_for_backward(X, W, RSTD)
        return Y


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return LigerRMSNormFunction.apply(x, weight, 1e-6)
