"""RMS norm in FlagGems' style: rows flattened with torch.reshape, one row per program, heuristics for the block.

Style: FlagGems
Task: l1/rms_norm
Idioms: a parameter called input, torch.reshape function form, functools.reduce over a shape, import operator, triton.heuristics, getattr(torch, device.type)
"""

import contextlib
import functools
import logging
import operator

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


@triton.heuristics(values={"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["N"])})
@triton.jit
def rms_norm_kernel(Y, X, W, y_stride_r, x_stride_r, N, eps, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    Y += pid * y_stride_r
    X += pid * x_stride_r

    mask = tl.arange(0, BLOCK_SIZE) < N
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)

    var = tl.sum(x * x, axis=0) / N
    rrms = 1 / tl.sqrt(var + eps)

    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    y = (x * rrms * w).to(Y.dtype.element_ty)
    tl.store(Y + cols, y, mask=mask)


def rms_norm(input: torch.Tensor, normalized_shape, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    logger.debug("GEMS RMS_NORM")
    dim = input.ndim - len(normalized_shape)
    M = functools.reduce(operator.mul, input.shape[:dim], 1)
    N = functools.reduce(operator.mul, normalized_shape, 1)
    x = torch.reshape(input.contiguous(), (M, N))
    w = torch.reshape(weight.contiguous(), (N,))
    y = torch.empty_like(x)
    torch_device_fn = getattr(torch, input.device.type)
    ctx = torch_device_fn.device(input.device) if input.is_cuda else contextlib.nullcontext()
    with ctx:
        rms_norm_kernel[(M,)](y, x, w, y.stride(0), x.stride(0), N, eps)
    return torch.reshape(y, input.shape)


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return rms_norm(x, (x.shape[-1],), weight, eps=1e-6)
