"""SiLU as a Liger-Kernel style autograd Function: one program per row, settings from a cached helper.

Style: Liger-Kernel
Task: l1/silu
Idioms: torch.autograd.Function wrapper called via .apply, a parameter called input, functools.lru_cache'd settings helper, functools.wraps decorator
"""

import functools

import torch
import triton
import triton.language as tl

MAX_FUSED_SIZE = 65536


@functools.lru_cache(maxsize=None)
def calculate_settings(n: int) -> tuple[int, int]:
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def maybe_to_contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [maybe_to_contiguous(arg) for arg in args]
        kwargs = {k: maybe_to_contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


@triton.jit
def _silu_forward_kernel(x_ptr, x_stride, y_ptr, y_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    x_ptr += program_id * x_stride
    y_ptr += program_id * y_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    x_row = tl.load(x_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    # x * sigmoid(x) = x / (1 + exp(-x)): no cancellation for x << 0.
    y_row = x_row / (1.0 + tl.exp(-x_row))
    tl.store(y_ptr + col_offsets, y_row.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_backward_kernel(dy_ptr, dy_stride, x_ptr, x_stride, dx_ptr, dx_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dy_row = tl.load(dy_ptr + program_id * dy_stride + col_offsets, mask=mask, other=0).to(tl.float32)
    x_row = tl.load(x_ptr + program_id * x_stride + col_offsets, mask=mask, other=0).to(tl.float32)
    sig = tl.sigmoid(x_row)
    dx_row = dy_row * sig * (1.0 + x_row * (1.0 - sig))
    tl.store(dx_ptr + program_id * dx_stride + col_offsets, dx_row.to(dx_ptr.dtype.element_ty), mask=mask)


def silu_forward(input: torch.Tensor) -> torch.Tensor:
    ori_shape = input.shape
    n_cols = ori_shape[-1]
    input = input.view(-1, n_cols)
    n_rows = input.shape[0]
    output = torch.empty_like(input)
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    _silu_forward_kernel[(n_rows,)](
        input, input.stride(-2), output, output.stride(-2), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps
    )
    return output.view(*ori_shape)


def silu_backward(grad_output: torch.Tensor, input: torch.Tensor) -> torch.Tensor:
    ori_shape = input.shape
    n_cols = ori_shape[-1]
    grad_output = grad_output.view(-1, n_cols)
    input = input.view(-1, n_cols)
    grad_input = torch.empty_like(input)
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    _silu_backward_kernel[(input.shape[0],)](
        grad_output, grad_output.stride(-2), input, input.stride(-2), grad_input, grad_input.stride(-2),
        n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )
    return grad_input.view(*ori_shape)


class LigerSiLUFunction(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return silu_forward(input)

    @staticmethod
    @ensure_contiguous
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return silu_backward(grad_output, input)


def kernel(input: torch.Tensor) -> torch.Tensor:
    return LigerSiLUFunction.apply(input)
