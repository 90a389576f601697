"""SiLU whose kernels are static methods of a class used as a namespace (`@staticmethod` over `@triton.jit`), with a helper jit function, a constexpr global and a default argument.

Style: unsloth
Task: l1/silu
Idioms: class used as a namespace of jit functions (static methods), torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl

ONE: tl.constexpr = tl.constexpr(1.0)


@triton.jit
def _silu(x):
    return x / (ONE + tl.exp(-x))


class SiLUKernels:
    @staticmethod
    @triton.jit
    def forward(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 1024):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, _silu(x).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024 if torch.cuda.is_available() else 4096
    SiLUKernels.forward[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
