"""Layer norm as a Liger-Kernel autograd Function; rsqrt from libdevice when compiled for a GPU.

Style: Liger-Kernel
Task: l1/layer_norm
Idioms: libdevice math (rsqrt, behind a torch.cuda.is_available() constexpr), packaging version gate on triton.__version__, import operator, torch.autograd.Function wrapper called via .apply, functools.wraps decorator
"""

import functools
import operator

import torch
import triton
import triton.language as tl
from packaging.version import Version
from triton.language.extra import libdevice


def compare_version(version: str, op, target: str) -> bool:
    return op(Version(version), Version(target))


# libdevice is reachable as triton.language.extra.libdevice from Triton 3.0; it only exists compiled.
USE_LIBDEVICE = compare_version(triton.__version__, operator.ge, "3.0.0") and torch.cuda.is_available()


def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    num_warps = 4
    if BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [arg.contiguous() if isinstance(arg, torch.Tensor) else arg for arg in args]
        return fn(ctx, *args, **kwargs)

    return wrapper


@triton.jit
def _layer_norm_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, B_ptr, Mean_ptr, RSTD_ptr,
    n_cols, eps, BLOCK_SIZE: tl.constexpr, USE_LIBDEVICE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    B_row = tl.load(B_ptr + col_offsets, mask=mask, other=0).to(tl.float32)

    mean = tl.sum(X_row, axis=0) / n_cols
    Xmm = tl.where(mask, X_row - mean, 0)
    var = tl.sum(Xmm * Xmm, axis=0) / n_cols
    if USE_LIBDEVICE:
        rstd = libdevice.rsqrt(var + eps)
    else:
        rstd = 1.0 / tl.sqrt(var + eps)

    tl.store(Mean_ptr + row_idx, mean)
    tl.store(RSTD_ptr + row_idx, rstd)

    Y_row = Xmm * rstd * W_row + B_row
    tl.store(Y_ptr + col_offsets, Y_row.to(Y_ptr.dtype.element_ty), mask=mask)


def layer_norm_forward(X, W, B, eps):
    shape = X.shape
    dim = shape[-1]
    X = X.view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    Mean = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _layer_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, B, Mean, RSTD, n_cols, eps,
        BLOCK_SIZE=BLOCK_SIZE, USE_LIBDEVICE=USE_LIBDEVICE, num_warps=num_warps,
    )
    return Y.view(*shape), X, Mean, RSTD


class LigerLayerNormFunction(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, X, W, B, eps):
        Y, X, Mean, RSTD = layer_norm_forward(X, W, B, eps)
        ctx.save_for_backward(X, W, B, Mean, RSTD)
        return Y


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return LigerLayerNormFunction.apply(x, weight, bias, 1e-5)
