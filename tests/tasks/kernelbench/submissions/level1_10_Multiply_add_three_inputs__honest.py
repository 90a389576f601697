# expect: passed
# why: a * b + c in one masked elementwise Triton kernel (an explicit multiply then add, as the reference rounds it).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mul_add_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    c = tl.load(c_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a * b + c, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        c = c.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        block = 1024
        _mul_add_kernel[(triton.cdiv(n, block),)](a, b, c, out, n, BLOCK=block)
        return out
