"""Row sum split over column chunks: the output is torch.zeros and each program atomically adds its chunk's partial sum into its row (split-K style).

Style: Triton tutorials
Task: l1/row_sum
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_split_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr + row, tl.sum(vals, axis=0))


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.zeros((m,), dtype=torch.float32, device=x.device)
    BLOCK = 1024 if torch.cuda.is_available() else 512
    row_sum_split_kernel[(m, triton.cdiv(n, BLOCK))](x, out, n, x.stride(0), BLOCK=BLOCK)
    return out.to(x.dtype)
