"""RMS norm as Liger-Kernel 0.8.5 writes it: `rsqrt` imported by name from libdevice under a module-level version `if` and a `try`/`except ModuleNotFoundError` fallback (NGC containers), `tl.math` on old Triton.

Style: Liger-Kernel
Task: l1/rms_norm
Idioms: packaging version gate on triton.__version__, import operator, torch.autograd.Function wrapper called via .apply
"""

import operator

import torch
import triton
import triton.language as tl
from packaging.version import Version


def compare_version(package_version: str, op, target: str) -> bool:
    return op(Version(package_version), Version(target))


def is_npu_available() -> bool:
    return False


if compare_version(triton.__version__, operator.ge, "3.0.0") and not is_npu_available():
    try:
        # typical import path with dispatch available
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        # for working with NGC containers
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt


@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = rsqrt(mean_square + eps)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, (X_row * rstd * W_row).to(Y_ptr.dtype.element_ty), mask=mask)


class LigerRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps):
        shape = X.shape
        X = X.reshape(-1, shape[-1]).contiguous()
        n_rows, n_cols = X.shape
        Y = torch.empty_like(X)
        _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W.contiguous(), n_cols, eps, BLOCK_SIZE=triton.next_power_of_2(n_cols))
        return Y.view(*shape)


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return LigerRMSNormFunction.apply(x, weight, 1e-6)
