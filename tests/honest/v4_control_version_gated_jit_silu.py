"""SiLU whose jit function is defined under a module-level version `if` (tl.sigmoid on current Triton, the spelled-out form on old releases).

Style: Liger-Kernel
Task: l1/silu
Idioms: packaging version gate on triton.__version__, torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl
from packaging.version import Version

if Version(triton.__version__) >= Version("2.1.0"):

    @triton.jit
    def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (x * tl.sigmoid(x)).to(out_ptr.dtype.element_ty), mask=mask)

else:

    @triton.jit
    def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024 if torch.cuda.is_available() else 4096
    silu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
