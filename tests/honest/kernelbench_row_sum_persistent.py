"""Row sum as a KernelBench ModelNew with a persistent grid: a fixed number of programs strides over the rows.

Style: KernelBench
Task: l1/row_sum
Idioms: persistent kernel (grid = number of SMs, loop over rows), do_not_specialize, torch.nn Module wrapper whose forward launches the kernel, torch.cuda.is_available() branch
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _num_programs() -> int:
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    return 4  # the CPU interpreter: a small fixed count


@triton.jit(do_not_specialize=["M"])
def row_sum_persistent(x_ptr, out_ptr, M, N, stride_xm, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    for row in range(pid, M, num_programs):
        acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            acc += tl.load(x_ptr + row * stride_xm + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.num_programs = _num_programs()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty((M,), dtype=x.dtype, device=x.device)
        grid = (min(self.num_programs, M),)
        row_sum_persistent[grid](x, out, M, N, x.stride(0), BLOCK_N=512)
        return out


model = ModelNew()


def kernel(x: torch.Tensor) -> torch.Tensor:
    return model(x)
