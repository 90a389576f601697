# expect: passed
# why: the linear layer stays in torch (an anchor op); the exact erf GELU and the scaling run fused in one masked Triton kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_scale_kernel(x_ptr, y_ptr, scale, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, g * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scaling_factor: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x).contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        block = 1024
        _gelu_scale_kernel[(triton.cdiv(n, block),)](x, y, float(self.scaling_factor), n, BLOCK=block)
        return y
