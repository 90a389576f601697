# expect: passed
# why: multiplies by the python scalar inside a masked Triton kernel that takes s as a scalar argument.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(a_ptr, out_ptr, s, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a * s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        A = A.contiguous()
        out = torch.empty_like(A)
        n = A.numel()
        block = 1024
        _scale_kernel[(triton.cdiv(n, block),)](A, out, float(s), n, BLOCK=block)
        return out
