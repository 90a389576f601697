import torch
import triton
import triton.language as tl


@triton.jit
def _dropout(x_ptr, u_ptr, out_ptr, n, p, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask, other=0.0)
    # keep * scale is exactly scale or 0, so x * it is x * scale or a signed zero.
    y = x * tl.where(u >= p, scale, 0.0)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, u: torch.Tensor, p: float) -> torch.Tensor:
    x = x.contiguous()
    u = u.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    block = 1024
    # p and scale = 1 / (1 - p) (computed in Python double) reach the kernel as float32 scalars.
    _dropout[(triton.cdiv(n, block),)](x, u, out, n, p, 1.0 / (1.0 - p), BLOCK=block, num_warps=4)
    return out
