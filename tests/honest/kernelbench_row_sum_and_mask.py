"""Row sum over 2-D tiles (several rows per program), masks combined with Python `and` (valid Triton: compiled code lowers it to logical_and).

Style: KernelBench
Task: l1/row_sum
Idioms: a and b on masks (the twin of kernelbench_row_sum_amp_mask.py)
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride_xm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (cols[None, :] < N) and (rows[:, None] < M)
        acc += tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1)
    tl.store(out_ptr + rows, total.to(out_ptr.dtype.element_ty), mask=rows < M)


def triton_row_sum(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    out = torch.empty((M,), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N = 8, 256
    grid = (triton.cdiv(M, BLOCK_M),)
    row_sum_kernel[grid](x, out, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return triton_row_sum(x)
