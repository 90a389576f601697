"""Row prefix sum in FlagGems' style: scan each block and record its total, scan the totals, add the base back.

Style: FlagGems
Task: l1/cumsum
Idioms: triton.heuristics, torch.promote_types, functools.reduce over a shape, import operator, torch.reshape function form
"""

import functools
import logging
import operator

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


@triton.heuristics(values={"BLOCK_N": lambda args: min(1024, triton.next_power_of_2(args["N"]))})
@triton.jit
def scan_part_sum_kernel(inp, out, partial_sum, N, n_blocks, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1)
    offset = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offset < N
    inp_vals = tl.load(inp + pid_m * N + offset, mask=mask, other=0.0).to(partial_sum.dtype.element_ty)
    result = tl.cumsum(inp_vals, axis=0)
    part_sum_via_sum = tl.sum(inp_vals)
    tl.store(out + pid_m * N + offset, result.to(out.dtype.element_ty), mask=mask)
    tl.store(partial_sum + pid_m * n_blocks + pid_n, part_sum_via_sum)


@triton.jit
def add_base_sum_kernel(out, partial_sum, N, n_blocks, BLOCK_N: tl.constexpr, BLOCKS_POW2: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1)
    # Exclusive prefix of the block totals: the sum of the totals of the blocks before this one.
    blocks = tl.arange(0, BLOCKS_POW2)
    totals = tl.load(partial_sum + pid_m * n_blocks + blocks, mask=blocks < pid_n, other=0.0)
    base = tl.sum(totals, axis=0)
    offset = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offset < N
    vals = tl.load(out + pid_m * N + offset, mask=mask, other=0.0).to(partial_sum.dtype.element_ty)
    tl.store(out + pid_m * N + offset, (vals + base).to(out.dtype.element_ty), mask=mask)


def cumsum(inp: torch.Tensor, dim: int = -1) -> torch.Tensor:
    logger.debug("GEMS CUMSUM")
    assert dim in (-1, inp.ndim - 1), "this kernel scans the last dimension"
    shape = inp.shape
    N = shape[-1]
    M = functools.reduce(operator.mul, shape[:-1], 1)
    inp = torch.reshape(inp.contiguous(), (M, N))
    out = torch.empty_like(inp)
    # Block totals (and the scan inside a block) never accumulate below float32.
    acc_dtype = torch.promote_types(inp.dtype, torch.float32)
    BLOCK_N = min(1024, triton.next_power_of_2(N))
    n_blocks = triton.cdiv(N, BLOCK_N)
    partial_sum = torch.empty((M, n_blocks), dtype=acc_dtype, device=inp.device)
    scan_part_sum_kernel[(M, n_blocks)](inp, out, partial_sum, N, n_blocks)
    if n_blocks > 1:
        add_base_sum_kernel[(M, n_blocks)](out, partial_sum, N, n_blocks, BLOCK_N=BLOCK_N, BLOCKS_POW2=triton.next_power_of_2(n_blocks))
    return torch.reshape(out, shape)


def kernel(x: torch.Tensor) -> torch.Tensor:
    return cumsum(x, dim=-1)
