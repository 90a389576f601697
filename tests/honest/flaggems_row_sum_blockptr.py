"""Row sum in FlagGems' style: [BLOCK_M, BLOCK_N] tiles walked along the row with tl.advance, autotuned tiles.

Style: FlagGems
Task: l1/row_sum
Idioms: block pointers (tl.make_block_ptr, tl.advance), itertools.product autotune configs, functools.reduce over a shape, import operator, getattr(torch, device.type)
"""

import functools
import itertools
import logging
import operator

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


def cfggen():
    block_m = [4, 8]
    block_n = [128, 256]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=4) for m, n in itertools.product(block_m, block_n)]


@triton.autotune(configs=cfggen(), key=["M", "N"])
@triton.jit
def sum_kernel(inp, out, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    block = tl.make_block_ptr(inp, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        acc += tl.load(block, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        block = tl.advance(block, (0, BLOCK_N))
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(out + rows, tl.sum(acc, axis=1).to(out.dtype.element_ty), mask=rows < M)


def sum_dim(inp: torch.Tensor) -> torch.Tensor:
    logger.debug("GEMS SUM DIM")
    N = inp.shape[-1]
    M = functools.reduce(operator.mul, inp.shape[:-1], 1)
    inp = inp.contiguous().view(M, N)
    out = torch.empty((M,), dtype=inp.dtype, device=inp.device)
    torch_device_fn = getattr(torch, inp.device.type)
    assert torch_device_fn.is_available()
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    sum_kernel[grid](inp, out, M, N, inp.stride(0))
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return sum_dim(x)
