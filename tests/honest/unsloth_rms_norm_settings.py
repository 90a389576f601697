"""RMS norm after unsloth's fast_rms_layernorm, with cached launch settings.

Style: unsloth
Task: l1/rms_norm
Idioms: functools.lru_cache'd settings helper, float scalar eps.to(tl.float32), libdevice math (rsqrt, behind a torch.cuda.is_available() constexpr), torch.cuda.is_available() branch
"""

import functools

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

MAX_FUSED_SIZE = 65536
next_power_of_2 = triton.next_power_of_2


@functools.lru_cache(maxsize=None)
def calculate_settings(n: int) -> tuple[int, int]:
    BLOCK_SIZE = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds the maximum CUDA blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def _rms_layernorm_forward(
    Y, Y_row_stride,
    X, X_row_stride,
    W,
    r,
    n_cols, eps,
    BLOCK_SIZE: tl.constexpr,
    USE_LIBDEVICE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx

    X_row = tl.load(X + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask=mask, other=0).to(tl.float32)

    row_var = tl.sum(X_row * X_row, axis=0) / n_cols
    if USE_LIBDEVICE:
        inv_var = libdevice.rsqrt(row_var + eps.to(tl.float32))
    else:
        inv_var = 1.0 / tl.sqrt(row_var + eps.to(tl.float32))
    tl.store(r, inv_var)
    output = X_row * inv_var * W_row
    tl.store(Y + col_offsets, output.to(Y.dtype.element_ty), mask=mask)


def fast_rms_layernorm(X: torch.Tensor, W: torch.Tensor, eps: float) -> torch.Tensor:
    shape = X.shape
    dim = shape[-1]
    X = X.contiguous().view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    r = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _rms_layernorm_forward[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W.contiguous(), r, n_cols, eps,
        BLOCK_SIZE=BLOCK_SIZE, USE_LIBDEVICE=torch.cuda.is_available(), num_warps=num_warps,
    )
    return Y.view(*shape)


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return fast_rms_layernorm(x, weight, 1e-6)
