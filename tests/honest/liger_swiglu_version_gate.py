"""SwiGLU as Liger-Kernel's SiLU-mul autograd Function, with a packaging version gate.

Style: Liger-Kernel
Task: l1/swiglu
Idioms: torch.autograd.Function wrapper called via .apply, packaging version gate on triton.__version__, import operator, functools.wraps decorator, torch.reshape function form
"""

import functools
import operator

import torch
import triton
import triton.language as tl
from packaging.version import Version


def compare_version(version: str, op, target: str) -> bool:
    return op(Version(version), Version(target))


# tl.sigmoid exists from Triton 2.1 on; older releases spell it out.
HAS_TL_SIGMOID = compare_version(triton.__version__, operator.ge, "2.1.0")


def calculate_settings(n: int) -> tuple[int, int]:
    BLOCK_SIZE = triton.next_power_of_2(n)
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
        args = [arg.contiguous() if isinstance(arg, torch.Tensor) else arg for arg in args]
        return fn(ctx, *args, **kwargs)

    return wrapper


@triton.jit
def silu(x, HAS_SIGMOID: tl.constexpr):
    if HAS_SIGMOID:
        return x * tl.sigmoid(x)
    else:
        return x / (1.0 + tl.exp(-x))


@triton.jit
def _swiglu_forward_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr, HAS_SIGMOID: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    c_ptr += program_id * stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    # sigmoid needs float32; the product is rounded once, at the store.
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    c_row = silu(a_row, HAS_SIGMOID) * b_row
    tl.store(c_ptr + col_offsets, c_row.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _swiglu_backward_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    offs = program_id * stride + col_offsets
    dc_row = tl.load(dc_ptr + offs, mask=mask, other=0).to(tl.float32)
    a_row = tl.load(a_ptr + offs, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + offs, mask=mask, other=0).to(tl.float32)
    sig_a = tl.sigmoid(a_row)
    silu_a = a_row * sig_a
    db_row = dc_row * silu_a
    da_row = dc_row * (silu_a * (1 - sig_a) + sig_a) * b_row
    tl.store(da_ptr + offs, da_row.to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offs, db_row.to(db_ptr.dtype.element_ty), mask=mask)


def swiglu_forward(a, b):
    ori_shape = a.shape
    n_cols = ori_shape[-1]
    a = torch.reshape(a, (-1, n_cols))
    b = torch.reshape(b, (-1, n_cols))
    c = torch.empty_like(a)
    n_rows = a.shape[0]
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    _swiglu_forward_kernel[(n_rows,)](
        a, b, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE, HAS_SIGMOID=HAS_TL_SIGMOID, num_warps=num_warps
    )
    return a, b, torch.reshape(c, ori_shape)


def swiglu_backward(a, b, dc):
    ori_shape = dc.shape
    n_cols = ori_shape[-1]
    dc = torch.reshape(dc, (-1, n_cols))
    da = torch.empty_like(a)
    db = torch.empty_like(b)
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    _swiglu_backward_kernel[(dc.shape[0],)](dc, a, b, da, db, dc.stride(-2), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return torch.reshape(da, ori_shape), torch.reshape(db, ori_shape)


class LigerSiLUMulFunction(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, a, b):
        a, b, c = swiglu_forward(a, b)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    @ensure_contiguous
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        return swiglu_backward(a, b, dc)


def kernel(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return LigerSiLUMulFunction.apply(gate, up)
