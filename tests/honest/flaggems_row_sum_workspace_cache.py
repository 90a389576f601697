"""Row sum in two passes with a workspace kept between calls, as FlagGems keeps its scratch buffers:
the first kernel writes each (row, block) partial sum into a module-level workspace cached per shape,
the second reduces the partials of each row. The workspace is scratch: every call writes it before reading it.

Style: FlagGems
Task: l1/row_sum
Idioms: module-level workspace cache (written before it is read, every call), functools.reduce over a shape, import operator
"""

import functools
import operator

import torch
import triton
import triton.language as tl

BLOCK_N = 256
_WORKSPACE: dict[tuple[str, int, int], torch.Tensor] = {}


@triton.jit
def partial_sums_kernel(x_ptr, ws_ptr, N, stride_m, BLOCKS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(x_ptr + row * stride_m + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(ws_ptr + row * BLOCKS + block, tl.sum(values, axis=0))


@triton.jit
def reduce_partials_kernel(ws_ptr, out_ptr, BLOCKS, BLOCK_B: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_B)
    acc = tl.zeros([BLOCK_B], dtype=tl.float32)
    for start in range(0, BLOCKS, BLOCK_B):
        idx = start + offs
        acc += tl.load(ws_ptr + row * BLOCKS + idx, mask=idx < BLOCKS, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def workspace(device: torch.device, rows: int, blocks: int) -> torch.Tensor:
    key = (str(device), rows, blocks)
    if key not in _WORKSPACE:
        _WORKSPACE[key] = torch.empty((rows, blocks), dtype=torch.float32, device=device)
    return _WORKSPACE[key]


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    N = x.shape[-1]
    M = functools.reduce(operator.mul, x.shape[:-1], 1)
    blocks = triton.cdiv(N, BLOCK_N)
    ws = workspace(x.device, M, blocks)
    out = torch.empty((M,), dtype=x.dtype, device=x.device)
    partial_sums_kernel[(M, blocks)](x, ws, N, x.stride(0), blocks, BLOCK=BLOCK_N)
    reduce_partials_kernel[(M,)](ws, out, blocks, BLOCK_B=triton.next_power_of_2(min(blocks, 64)))
    return out
