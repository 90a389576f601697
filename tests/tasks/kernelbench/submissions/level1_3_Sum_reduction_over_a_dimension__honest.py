# expect: passed
# why: views the input as (outer, reduced, inner) and sums the reduced axis in fp32 in a Triton loop, for any dim.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_dim_kernel(x_ptr, out_ptr, R, INNER, BLOCK: tl.constexpr):
    outer = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < INNER
    base = x_ptr + outer * R * INNER
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(R):
        acc += tl.load(base + r * INNER + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + outer * INNER + cols, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1 :]:
            inner *= s
        R = shape[d]
        out_shape = shape[:d] + [1] + shape[d + 1 :]
        out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        block = 128
        _sum_dim_kernel[(outer, triton.cdiv(inner, block))](x, out, R, inner, BLOCK=block)
        return out
