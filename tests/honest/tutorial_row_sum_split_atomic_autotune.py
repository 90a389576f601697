"""Row sum split along the row, each program adding its block's partial sum into the row's float32
accumulator with `tl.atomic_add`; the split size is autotuned, with the accumulator reset between the
autotuner's benchmark runs (`reset_to_zero`), as the split-K matmul tutorials do.

Style: Triton tutorials
Task: l1/row_sum
Idioms: autotune reset_to_zero on an atomic accumulator, torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl

SPLITS = (256, 1024) if not torch.cuda.is_available() else (1024, 4096)


@triton.autotune(configs=[triton.Config({"BLOCK": block}) for block in SPLITS], key=["N"], reset_to_zero=["acc_ptr"])
@triton.jit
def split_row_sum_kernel(x_ptr, acc_ptr, N, stride_m, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(x_ptr + row * stride_m + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.atomic_add(acc_ptr + row, tl.sum(values, axis=0))


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    acc = torch.zeros((M,), dtype=torch.float32, device=x.device)
    grid = lambda meta: (M, triton.cdiv(N, meta["BLOCK"]))
    split_row_sum_kernel[grid](x, acc, N, x.stride(0))
    return acc.to(x.dtype)
